import { Hono } from "hono";
import { toggleHandler } from "../likes/toggle";
import { requireUser } from "../middleware/auth";
import { identifyViewer } from "../middleware/viewer";
import type { AppEnv } from "../types";

export const likes = new Hono<AppEnv>();

/** Like an item: counts once per user, ever; a repeat answers `already_liked`. */
likes.post("/v1/like", requireUser, identifyViewer, toggleHandler("likes", true));

/** Unlike an item: a repeat (or an unlike of something never liked) answers `not_liked`. */
likes.delete("/v1/like", requireUser, identifyViewer, toggleHandler("likes", false));
