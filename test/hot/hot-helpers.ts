import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import type { ItemDescription } from "../../shared/contracts";
import { like, newUser } from "../workers/helpers";

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

/** Waits for the children's reports to bring the head's likes to `expected`, checking it never goes negative. */
export async function settledLikes(key: string, expected: number): Promise<number> {
  const deadline = Date.now() + 10_000;
  let likes = -1;
  while (Date.now() < deadline) {
    likes = (await head(key).read()).counts.likes;
    expect(likes).toBeGreaterThanOrEqual(0);
    if (likes === expected) return likes;
    await sleep(50);
  }
  return likes;
}

/** Waits until the item's write rate has stayed low for a whole cool window. */
export async function waitToCool(): Promise<void> {
  await sleep(2_600);
}

/** Waits for the head's own cooling check to merge the item back (it runs every cool window). */
export async function cooled(key: string): Promise<boolean> {
  const deadline = Date.now() + 8_000;
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
