import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import type { ItemDescription } from "../../shared/contracts";
import { freshId, like, newUser } from "../workers/helpers";

// Settings of this project (vitest.config.ts): hot past 10 writes/s over 1 s,
// 4 children, cool under 1 write/s over 2 s, children report every 50 ms.
export const SHARDS = 4;

export const head = (key: string) => env.ITEM_COUNTER.get(env.ITEM_COUNTER.idFromName(key));
export const child = (key: string, index: number) => env.ITEM_SHARD.get(env.ITEM_SHARD.idFromName(`${key}#${index}`));
export const user = (id: string) => env.USER_LIKES.get(env.USER_LIKES.idFromName(`u:${id}`));
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export type User = { id: string; token: string };

export async function describeItem(key: string): Promise<ItemDescription> {
  return await head(key).describe();
}

export async function users(n: number): Promise<User[]> {
  return Promise.all(Array.from({ length: n }, () => newUser()));
}

/** Likes from fresh users in waves until the item's head says it is hot; returns those users. */
export async function makeHot(id: string): Promise<User[]> {
  const key = `post:${id}`;
  const likers: User[] = [];
  for (let wave = 0; wave < 40 && !(await describeItem(key)).hot; wave++) {
    const batch = await users(8);
    const answers = await Promise.all(batch.map((u) => like(u.token, id)));
    expect(answers.every((r) => r.status === 200)).toBe(true);
    likers.push(...batch);
    await sleep(100);
  }
  expect((await describeItem(key)).hot).toBe(true);
  return likers;
}

/**
 * Likes from these users in groups of five a second, under the hot threshold
 * (10 writes/s over 1 s here), so their edges are created at the head. The
 * pause paces the load; it waits for no state.
 */
export async function likeBelowHotRate(likers: readonly User[], id: string): Promise<void> {
  for (let i = 0; i < likers.length; i += 5) {
    if (i > 0) await sleep(1_100);
    const answers = await Promise.all(likers.slice(i, i + 5).map((u) => like(u.token, id)));
    expect(answers.every((r) => r.status === 200)).toBe(true);
  }
  expect(await delivered(likers.map((u) => u.id))).toBe(true);
}

/**
 * How long a helper below waits for the system to settle: a few seconds on a
 * quiet machine, many more on a loaded one (two cores, four test files and
 * their runtimes at once), where a crash's redeliveries wait their turn.
 */
export const SETTLE_MS = 60_000;

/** Waits for the children's reports to bring the head's likes to `expected`, checking it never goes negative. */
export async function settledLikes(key: string, expected: number): Promise<number> {
  const deadline = Date.now() + SETTLE_MS;
  let likes = -1;
  while (Date.now() < deadline) {
    likes = (await head(key).read()).counts.likes;
    expect(likes).toBeGreaterThanOrEqual(0);
    if (likes === expected) return likes;
    await sleep(50);
  }
  return likes;
}

/**
 * Waits for the head's own cooling check to merge the item back: it runs
 * when the item can first cool, once the rate stayed low for a whole cool
 * window.
 */
export async function cooled(key: string): Promise<boolean> {
  const deadline = Date.now() + SETTLE_MS;
  while (Date.now() < deadline) {
    if (!(await describeItem(key)).hot) return true;
    await sleep(200);
  }
  return false;
}

export async function homeOf(userId: string, key: string): Promise<number> {
  return runInDurableObject(user(userId), (_, state) =>
    state.storage.sql.exec<{ home: number }>("SELECT home FROM edges WHERE item = ? AND counter = 'likes'", key).one().home,
  );
}

/** Edges the head still holds itself, and whether a hand-over batch is in flight. */
export async function headEdges(key: string): Promise<{ held: number; moved: number; handing: boolean }> {
  return runInDurableObject(head(key), (_, state) => {
    const sql = state.storage.sql;
    const count = (where: string) => sql.exec<{ n: number }>(`SELECT count(*) AS n FROM edges WHERE ${where}`).one().n;
    const handing = sql.exec<{ handing: string | null }>("SELECT handing FROM state").toArray()[0]?.handing ?? null;
    return { held: count("moved IS NULL"), moved: count("moved IS NOT NULL"), handing: handing !== null };
  });
}

/** Waits until a hot head has handed every edge it held over to its children. */
export async function handedOver(key: string): Promise<boolean> {
  const deadline = Date.now() + SETTLE_MS;
  while (Date.now() < deadline) {
    const edges = await headEdges(key);
    if (edges.held === 0 && !edges.handing) return true;
    await sleep(100);
  }
  return false;
}

/** Waits until these users' objects have delivered everything in their outboxes. */
export async function delivered(ids: readonly string[]): Promise<boolean> {
  const deadline = Date.now() + SETTLE_MS;
  while (Date.now() < deadline) {
    const pending = await Promise.all(ids.map((id) => user(id).pendingDeliveries()));
    if (pending.every((n) => n === 0)) return true;
    await sleep(100);
  }
  return false;
}

/**
 * Keeps a hot item hot without changing its counts: changes from users new
 * to the item, which its hot head refuses (new edges belong to its
 * children), still count as its writes. So no snapshot but a repair rewrites
 * the item's rows. Sent on a timer, ten a second, not one after another's
 * answer: the head checks its cooling the moment its 2 s window could fall
 * under the cool rate, and answers slowed by a busy machine must not let
 * the rate dip there. The timer paces the load; it waits for no state.
 * Stopping it waits for every answer and says which were not a refusal.
 */
export function keepHot(key: string): () => Promise<string[]> {
  const answers: Promise<void>[] = [];
  const wrong: string[] = [];
  const send = () =>
    head(key)
      .apply([{ user: freshId(), counter: "likes", state: 1, inc: 1, seq: 1, at: Date.now() }])
      .then(
        (answer) => void (answer.status !== "moved" && wrong.push(answer.status)),
        (error: unknown) => void wrong.push(String(error)),
      );
  const timer = setInterval(() => answers.push(send()), 100);
  return async () => {
    clearInterval(timer);
    await Promise.allSettled(answers);
    return wrong;
  };
}
