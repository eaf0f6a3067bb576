import { Hono } from "hono";
import { openApiDocument } from "../openapi/document";
import type { AppEnv } from "../types";

export const openapi = new Hono<AppEnv>();

/** The OpenAPI 3.1 document, generated from the endpoint registry and the zod schemas. */
openapi.get("/openapi.json", (c) => c.json(openApiDocument()));
