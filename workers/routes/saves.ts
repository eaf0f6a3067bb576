import { Hono } from "hono";
import { formatCount } from "../../shared/format";
import { ItemRef, type SaveResponse } from "../../shared/schemas";
import { setToggle } from "../lib/toggle";
import { readJson } from "../lib/validation";
import { requireUser } from "../middleware/auth";
import type { AppEnv } from "../types";

export const saves = new Hono<AppEnv>();

/** Save an item: a per-user toggle, exactly like a like (dedup, never negative). */
saves.post("/v1/save", requireUser, async (c) => {
  const ref = await readJson(c, ItemRef);
  const rt = { env: c.env, ctx: c.executionCtx };
  const { changed, count } = await setToggle(rt, c.get("principal").userId, ref, "saves", true);
  return c.json<SaveResponse>({
    status: changed ? "saved" : "already_saved",
    count,
    count_formatted: formatCount(count),
    user_saved: true,
  });
});

saves.delete("/v1/save", requireUser, async (c) => {
  const ref = await readJson(c, ItemRef);
  const rt = { env: c.env, ctx: c.executionCtx };
  const { changed, count } = await setToggle(rt, c.get("principal").userId, ref, "saves", false);
  return c.json<SaveResponse>({
    status: changed ? "unsaved" : "not_saved",
    count,
    count_formatted: formatCount(count),
    user_saved: false,
  });
});
