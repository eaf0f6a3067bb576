import { Hono } from "hono";
import { BlockParams } from "../../shared/schemas";
import { readParams } from "../lib/validation";
import { requireService } from "../middleware/auth";
import { liftBlock, recordBlock, storedBlock } from "../privacy/blocks";
import type { AppEnv } from "../types";

export const blocks = new Hono<AppEnv>();

const PATH = "/v1/admin/users/:user_id/blocks/:blocked_id";

function answer(blocker: string, blocked: string, since: number | null) {
  return { blocker_id: blocker, blocked_id: blocked, blocking: since !== null, since: since === null ? null : new Date(since).toISOString() };
}

/** The host app records that user_id blocks blocked_id: blocked_id can no longer like or save user_id's items. Idempotent. */
blocks.put(PATH, requireService, async (c) => {
  const { user_id, blocked_id } = readParams(c, BlockParams);
  return c.json(answer(user_id, blocked_id, await recordBlock(c.env, user_id, blocked_id, Date.now())));
});

/** Lifts a block; lifting one that does not exist answers the same. */
blocks.delete(PATH, requireService, async (c) => {
  const { user_id, blocked_id } = readParams(c, BlockParams);
  await liftBlock(c.env, user_id, blocked_id, Date.now());
  return c.json(answer(user_id, blocked_id, null));
});

/** Whether user_id blocks blocked_id, and since when. */
blocks.get(PATH, requireService, async (c) => {
  const { user_id, blocked_id } = readParams(c, BlockParams);
  return c.json(answer(user_id, blocked_id, await storedBlock(c.env, user_id, blocked_id)));
});
