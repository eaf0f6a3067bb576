import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { userObjectName } from "../../shared/object-names";
import { drainIntents } from "../../workers/likes/intents";
import { call, freshId, json, like, newUser, unlike } from "./helpers";
import { central, d1Counts, itemStub, settled } from "./pipeline-helpers";
import { setHeld } from "./fault-points";

const userStub = (id: string) => env.USER_LIKES.get(env.USER_LIKES.idFromName(userObjectName(id)));

/** The user's object hangs on every toggle while `unreachable` is set, then fails it: no toggle reaches it. */
async function setUnreachable(user: string, unreachable: boolean): Promise<void> {
  await runInDurableObject(userStub(user), (instance) => {
    setHeld(instance, "toggle", unreachable, { fail: true });
  });
}

async function hasLiked(token: string, item: string): Promise<boolean> {
  return (await hasLikedAll(token, [item])).liked[item]!;
}

async function hasLikedAll(token: string, items: readonly string[]): Promise<{ liked: Record<string, boolean>; pending?: string[] }> {
  const res = await call("POST", "/v1/has_liked", { token, body: { item_ids: items, item_type: "post" } });
  expect(res.status).toBe(200);
  return await json(res);
}

const pendingRows = async (user: string) =>
  (await env.DB.prepare("SELECT target, asked_at FROM pending_intents WHERE user_id = ?").bind(user).all()).results;

/** Applies kept intents until none of this user's is left (the cron's pass, run by hand). */
async function drainFor(user: string): Promise<void> {
  await vi.waitFor(
    async () => {
      await drainIntents(env);
      expect(await pendingRows(user)).toEqual([]);
    },
    { timeout: 10_000, interval: 100 },
  );
}

describe("a like while the user's object cannot be reached", () => {
  it("answers 202 pending, keeps the intent durably, and applies it exactly once when the object is back", async () => {
    const [user, item] = [await newUser(), freshId()];
    await setUnreachable(user.id, true);
    const res = await like(user.token, item);
    expect(res.status).toBe(202);
    expect(await json(res)).toEqual({ status: "pending" });
    expect(await pendingRows(user.id)).toEqual([{ target: 1, asked_at: expect.any(Number) }]);

    await setUnreachable(user.id, false);
    await drainFor(user.id);
    expect(await hasLiked(user.token, item)).toBe(true);
    await vi.waitFor(async () => expect((await itemStub(`post:${item}`).read()).counts.likes).toBe(1), { timeout: 10_000, interval: 100 });
    // A second pass finds nothing, and the like still counts once.
    expect(await drainIntents(env)).toBe(0);
    expect((await json(await like(user.token, item))).status).toBe("already_liked");
    expect((await itemStub(`post:${item}`).read()).counts.likes).toBe(1);
  });

  it("never undoes a newer action of the same user on the same item", async () => {
    const [user, item] = [await newUser(), freshId()];
    await setUnreachable(user.id, true);
    expect((await like(user.token, item)).status).toBe(202);
    await setUnreachable(user.id, false);
    // The user changes their mind once the object answers: this unlike is newer than the kept like.
    expect((await json(await unlike(user.token, item))).status).toBe("not_liked");
    await drainFor(user.id);
    expect(await hasLiked(user.token, item)).toBe(false);
    expect((await itemStub(`post:${item}`).read()).counts.likes).toBe(0);
  });
});

describe("a burst of likes kept while users' objects were away", () => {
  // 20 users of 10 likes each: under the per-user limit (30 a minute), which the objects apply when the intents arrive.
  const USERS = 20;
  const LIKES_EACH = 10;

  it("shows each user their own likes at once, then applies every one exactly once within seconds of the objects' return, with no cron", async () => {
    const users = await Promise.all(Array.from({ length: USERS }, () => newUser()));
    const items = Array.from({ length: LIKES_EACH }, () => freshId());
    await Promise.all(users.map((user) => setUnreachable(user.id, true)));

    const answers = await Promise.all(users.flatMap((user) => items.map((item) => like(user.token, item))));
    expect(answers.map((res) => res.status)).toEqual(answers.map(() => 202));
    // Read-your-writes: has_liked answers from the pending intents, and says so; another user sees nothing of them.
    for (const user of users) expect(await hasLikedAll(user.token, items)).toEqual({ liked: Object.fromEntries(items.map((i) => [i, true])), pending: items });
    const stranger = await newUser();
    expect(await hasLikedAll(stranger.token, items)).toEqual({ liked: Object.fromEntries(items.map((i) => [i, false])) });
    const mine = await json(await call("GET", "/v1/me/likes", { token: users[0]!.token }));
    const listed = mine.likes as { item_id: string; liked_at: string; pending?: boolean }[];
    expect(listed.map((l) => l.item_id).sort()).toEqual([...items].sort());
    expect(listed.every((l) => l.pending === true)).toBe(true);
    expect(listed.map((l) => l.liked_at)).toEqual(listed.map((l) => l.liked_at).sort().reverse());

    await Promise.all(users.map((user) => setUnreachable(user.id, false)));
    // The drains asked for when the likes were kept retry on their own; nothing here drains or calls the cron.
    await vi.waitFor(
      async () => {
        for (const user of users) expect(await pendingRows(user.id)).toEqual([]);
      },
      { timeout: 10_000, interval: 200 },
    );

    for (const user of users) expect(await hasLikedAll(user.token, items)).toEqual({ liked: Object.fromEntries(items.map((i) => [i, true])) });
    const store = await central();
    for (const item of items) {
      // The users' objects deliver to the item after their intents are applied: an item can be settled at one like while the other deliveries are on their way.
      await vi.waitFor(async () => expect((await settled(`post:${item}`, 5_000)).likes).toBe(USERS), { timeout: 20_000, interval: 200 });
      await vi.waitFor(
        async () => {
          expect((await d1Counts(`post:${item}`))?.counts.likes).toBe(USERS);
          expect((await store.readCounts(`post:${item}`))?.counts.likes).toBe(USERS);
        },
        { timeout: 10_000, interval: 100 },
      );
    }
    // Applied once each: a like now changes nothing.
    expect((await json(await like(users[0]!.token, items[0]!))).status).toBe("already_liked");
  });
});
