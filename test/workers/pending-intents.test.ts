import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { userObjectName } from "../../shared/object-names";
import { drainIntents } from "../../workers/likes/intents";
import { call, freshId, json, like, newUser, unlike } from "./helpers";
import { itemStub } from "./pipeline-helpers";

const userStub = (id: string) => env.USER_LIKES.get(env.USER_LIKES.idFromName(userObjectName(id)));

/** The user's object hangs on every toggle while `unreachable` is set, then fails it: no toggle reaches it. */
async function setUnreachable(user: string, unreachable: boolean): Promise<void> {
  await runInDurableObject(userStub(user), (instance) => {
    instance.faults.unreachable = unreachable;
  });
}

async function hasLiked(token: string, item: string): Promise<boolean> {
  const res = await call("POST", "/v1/has_liked", { token, body: { item_ids: [item], item_type: "post" } });
  return (await json(res)).liked[item];
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
