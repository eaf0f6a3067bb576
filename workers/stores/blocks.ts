import { d1, type QueryPath } from "./d1";

/** A block between two users, as `blocks` holds it. */
export type BlockRow = { blocker_id: string; blocked_id: string };

/** When `blocker` blocked `blocked` (ms), or null when there is no such block. */
export async function readBlock(env: Env, blocker: string, blocked: string, path?: QueryPath): Promise<number | null> {
  const row = await d1(env, env.DB, "blocks", undefined, path).first<{ created_at: number }>(
    env.DB.prepare("SELECT created_at FROM blocks WHERE blocker_id = ?1 AND blocked_id = ?2").bind(blocker, blocked),
  );
  return row?.created_at ?? null;
}

/** Stores a block (again: keeps the first time). Returns when it was first stored, if D1 says. */
export async function insertBlock(env: Env, blocker: string, blocked: string, now: number): Promise<number | null> {
  const row = await d1(env, env.DB, "blocks").first<{ created_at: number }>(
    env.DB.prepare(
      `INSERT INTO blocks (blocker_id, blocked_id, created_at) VALUES (?1, ?2, ?3)
       ON CONFLICT (blocker_id, blocked_id) DO UPDATE SET created_at = created_at RETURNING created_at`,
    ).bind(blocker, blocked, now),
  );
  return row?.created_at ?? null;
}

/** Deletes a block; deleting one that does not exist is not an error. */
export async function deleteBlock(env: Env, blocker: string, blocked: string): Promise<void> {
  await d1(env, env.DB, "blocks").run(env.DB.prepare("DELETE FROM blocks WHERE blocker_id = ?1 AND blocked_id = ?2").bind(blocker, blocked));
}

/**
 * The blocks between a list's `users` and the two users it is read for: those
 * `owner` makes, those `viewer` makes, and those that block `viewer`. One
 * query (index `blocks_blocked` for the last).
 */
export async function blocksAmong(env: Env, owner: string, viewer: string, users: readonly string[], caller: string): Promise<BlockRow[]> {
  return await d1(env, env.DB, caller).all<BlockRow>(
    env.DB.prepare(
      `SELECT blocker_id, blocked_id FROM blocks
       WHERE (blocker_id IN (?1, ?2) AND blocked_id IN (SELECT value FROM json_each(?3)))
          OR (blocked_id = ?2 AND blocker_id IN (SELECT value FROM json_each(?3)))`,
    ).bind(owner, viewer, JSON.stringify(users)),
  );
}

/** Every block a user made or was the target of (an account deletion). */
export async function deleteBlocksOf(env: Env, user: string, caller: string): Promise<void> {
  await d1(env, env.DB, caller).run(env.DB.prepare("DELETE FROM blocks WHERE blocker_id = ?1 OR blocked_id = ?1").bind(user));
}
