import { Hono } from "hono";
import type { AppEnv } from "../types";

export const health = new Hono<AppEnv>();

/** Liveness of the Worker itself; touches no object or store. */
health.get("/healthz", (c) => c.json({ status: "ok" }));
