import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { childFor, HEAD } from "../../shared/placement";
import { freshId, like } from "../workers/helpers";
import { SHARDS, child, delivered, describeItem, head, headEdges, homeOf, makeHot, settledLikes, sleep, user, users, type User } from "../hot/hot-helpers";

const GROWN = SHARDS * 4;

/**
 * Likes from fresh users in waves until the item's N has grown. Every object
 * is evicted right after the first wave, whose deliveries and reports are
 * then in flight: the item split moments ago, and it grows only after a whole
 * hot window since, so this is a crash in the middle of the growth.
 */
async function growUnderLoad(id: string): Promise<User[]> {
  const likers: User[] = [];
  for (let wave = 0; wave < 60 && (await describeItem(`post:${id}`)).shards < GROWN; wave++) {
    const batch = await users(8);
    const answers = await Promise.all(batch.map((u) => like(u.token, id)));
    expect(answers.map((r) => r.status)).toEqual(batch.map(() => 200));
    likers.push(...batch);
    if (wave === 0) {
      expect((await describeItem(`post:${id}`)).shards).toBe(SHARDS);
      await abortAllDurableObjects();
    }
    await sleep(100);
  }
  expect((await describeItem(`post:${id}`)).shards).toBe(GROWN);
  return likers;
}

/** Where a user's like is held: the head (not handed over) or child i; every place that holds it. */
async function placesHolding(key: string, userId: string): Promise<number[]> {
  const query = (where: string) => `SELECT count(*) AS n FROM edges WHERE user = ? AND counter = 'likes' AND state = 1 ${where}`;
  const places: number[] = [];
  const atHead = await runInDurableObject(head(key), (_, state) => state.storage.sql.exec<{ n: number }>(query("AND moved IS NULL"), userId).one().n);
  if (atHead > 0) places.push(HEAD);
  for (let index = 0; index < GROWN; index++) {
    const n = await runInDurableObject(child(key, index), (_, state) =>
      state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM sqlite_master WHERE name = 'edges'").one().n > 0
        ? state.storage.sql.exec<{ n: number }>(query(""), userId).one().n
        : 0,
    );
    if (n > 0) places.push(index);
  }
  return places;
}

describe("an item whose N grows", () => {
  it("grows from N to 4N under load, across a crash, with every like counted once in its recorded home", async () => {
    const id = freshId();
    const key = `post:${id}`;
    const split = await makeHot(id);
    const growing = await growUnderLoad(id);
    const late = await users(12);
    const answers = await Promise.all(late.map((u) => like(u.token, id)));
    expect(answers.map((r) => r.status)).toEqual(late.map(() => 200));
    // And a crash once the first of these likes reached the item side (their deliveries begin after the answers):
    // the others' deliveries, refusals and re-homings under the wider map are then most likely in flight.
    await expect.poll(async () => (await Promise.all(late.map((u) => user(u.id).pendingDeliveries()))).some((n) => n === 0), { timeout: 30_000, interval: 10 }).toBe(true);
    await abortAllDurableObjects();
    const everyone = [...split, ...growing, ...late];
    expect(await delivered(everyone.map((u) => u.id))).toBe(true);
    expect(await settledLikes(key, everyone.length)).toBe(everyone.length);
    // A hand-over batch cut off by the crash resumes when the head wakes again; until it lands, its edges are on their way.
    await expect.poll(async () => (await headEdges(key)).handing, { timeout: 60_000, interval: 100 }).toBe(false);
    // New edges take the wider map; each edge, old or new, is held in exactly one place: its recorded home.
    for (const u of late) expect(await homeOf(u.id, key)).toBe(childFor(u.id, GROWN));
    for (const u of everyone) expect(await placesHolding(key, u.id)).toEqual([await homeOf(u.id, key)]);
    const homes = await Promise.all(everyone.map((u) => homeOf(u.id, key)));
    expect(homes.some((home, i) => home !== childFor(everyone[i]!.id, GROWN))).toBe(true);
    // The item is counted at its largest N: it grows no further.
    expect((await describeItem(key)).shards).toBe(GROWN);
    // Its waits (the split, the load, the deliveries, the reports) add up past the project's limit on a loaded machine.
  }, 300_000);
});
