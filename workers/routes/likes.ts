import { Hono } from "hono";
import { formatCount } from "../../shared/format";
import { ItemRef, type LikeResponse } from "../../shared/schemas";
import { setToggle } from "../lib/toggle";
import { readJson } from "../lib/validation";
import { requireUser } from "../middleware/auth";
import type { AppEnv } from "../types";

export const likes = new Hono<AppEnv>();

/** Like an item: counts once per user, ever; a repeat answers `already_liked`. */
likes.post("/v1/like", requireUser, async (c) => {
  const ref = await readJson(c, ItemRef);
  const rt = { env: c.env, ctx: c.executionCtx };
  const { changed, count } = await setToggle(rt, c.get("principal").userId, ref, "likes", true);
  return c.json<LikeResponse>({
    status: changed ? "liked" : "already_liked",
    count,
    count_formatted: formatCount(count),
    user_liked: true,
  });
});

/** Unlike an item: a repeat (or an unlike of something never liked) answers `not_liked`. */
likes.delete("/v1/like", requireUser, async (c) => {
  const ref = await readJson(c, ItemRef);
  const rt = { env: c.env, ctx: c.executionCtx };
  const { changed, count } = await setToggle(rt, c.get("principal").userId, ref, "likes", false);
  return c.json<LikeResponse>({
    status: changed ? "unliked" : "not_liked",
    count,
    count_formatted: formatCount(count),
    user_liked: false,
  });
});
