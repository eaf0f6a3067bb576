import { Hono } from "hono";
import { toggleHandler } from "../likes/toggle";
import { requireUser } from "../middleware/auth";
import { identifyViewer } from "../middleware/viewer";
import type { AppEnv } from "../types";

export const saves = new Hono<AppEnv>();

/** Save an item: a per-user toggle, exactly like a like (dedup, never negative). */
saves.post("/v1/save", requireUser, identifyViewer, toggleHandler("saves", true));

/** Unsave an item: a repeat (or an unsave of something never saved) answers `not_saved`. */
saves.delete("/v1/save", requireUser, identifyViewer, toggleHandler("saves", false));
