import { config } from "../../shared/config";
import { blocksAmong, deleteBlock, insertBlock, readBlock } from "../stores/blocks";
import type { QueryPath } from "../stores/d1";
import { unavailable } from "../lib/errors";
import { TtlCache } from "../lib/ttl-cache";

/** "A blocks B" as this isolate last read it, keyed `A>B`. */
const cache = new TtlCache<boolean>(10_000);
const pair = (blocker: string, blocked: string) => `${blocker}>${blocked}`;

/** When the block was recorded (ms), or null when there is none. Read from D1, never from the cache. */
export async function storedBlock(env: Env, blocker: string, blocked: string, path?: QueryPath): Promise<number | null> {
  return await readBlock(env, blocker, blocked, path);
}

/**
 * Whether `blocker` blocks `blocked`: this isolate's cache, else one indexed
 * D1 read. When D1 fails, the last answer known here; with none, 503.
 */
export async function isBlocked(env: Env, blocker: string, blocked: string): Promise<boolean> {
  const key = pair(blocker, blocked);
  const now = Date.now();
  const hit = cache.get(key, now);
  if (hit !== undefined) return hit;
  try {
    // Asked only by a write before its answer.
    const answer = (await storedBlock(env, blocker, blocked, "critical")) !== null;
    cache.put(key, answer, config(env).PRIVACY_CACHE_TTL_MS, now);
    return answer;
  } catch {
    const known = cache.lastKnown(key);
    if (known === undefined) throw unavailable("Blocks cannot be read right now.");
    return known;
  }
}

/** Records a block (again: keeps the first time). Returns when it was first recorded. */
export async function recordBlock(env: Env, blocker: string, blocked: string, now: number): Promise<number> {
  const first = await insertBlock(env, blocker, blocked, now);
  cache.put(pair(blocker, blocked), true, config(env).PRIVACY_CACHE_TTL_MS, now);
  return first ?? now;
}

/** Lifts a block; lifting one that does not exist is not an error. */
export async function liftBlock(env: Env, blocker: string, blocked: string, now: number): Promise<void> {
  await deleteBlock(env, blocker, blocked);
  cache.put(pair(blocker, blocked), false, config(env).PRIVACY_CACHE_TTL_MS, now);
}

/**
 * Which of `users` a likers list that `viewer` reads of an item `owner` owns
 * leaves out: those the owner blocks, and those who block the viewer or whom
 * the viewer blocks. One D1 query (stores/blocks.ts), never the cache: a
 * list is rare, and a block must show in it at once.
 */
export async function hiddenLikers(env: Env, owner: string | null, viewer: string, users: readonly string[], caller: string): Promise<Set<string>> {
  if (users.length === 0) return new Set();
  const rows = await blocksAmong(env, owner ?? viewer, viewer, users, caller);
  const listed = new Set(users);
  const hidden = new Set<string>();
  for (const { blocker_id: blocker, blocked_id: blocked } of rows) {
    if ((blocker === owner || blocker === viewer) && listed.has(blocked)) hidden.add(blocked);
    if (blocked === viewer && listed.has(blocker)) hidden.add(blocker);
  }
  return hidden;
}
