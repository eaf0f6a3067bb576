import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { forgetPlacement } from "../../durable-objects/lib/placement-cache";
import { childFor } from "../../shared/placement";
import { call, freshId, json, like, newUser } from "../workers/helpers";
import { SHARDS, delivered, head, makeHot, settledLikes, homeOf } from "./hot-helpers";

describe("hot items re-home", () => {
  it("re-homes, records and counts once a like sent with a stale shard map", async () => {
    const id = freshId();
    const key = `post:${id}`;
    const before = await makeHot(id);
    // The wave's own refusals land after their answers: let them finish before counting.
    expect(await delivered(before.map((u) => u.id))).toBe(true);
    forgetPlacement(key);
    const refusedBefore = await runInDurableObject(head(key), (instance) => instance.stats.refused);
    const late = await newUser();
    expect((await json(await like(late.token, id))).status).toBe("liked");
    // Delivery follows the answer: the head refuses the new edge, and the user's object records its child.
    await expect.poll(() => homeOf(late.id, key), { timeout: 10_000 }).toBe(childFor(late.id, SHARDS));
    expect(await runInDurableObject(head(key), (instance) => instance.stats.refused)).toBe(refusedBefore + 1);
    expect((await json(await like(late.token, id))).status).toBe("already_liked");
    expect(await settledLikes(key, before.length + 1)).toBe(before.length + 1);
  });

  it("keeps the head's total right when a child's reports arrive twice and out of order", async () => {
    const key = `post:${freshId()}`;
    await head(key).report(2, { likes: 5, saves: 1, seq: 7, writes: 9 });
    await head(key).report(2, { likes: 3, saves: 0, seq: 4, writes: 5 });
    await head(key).report(2, { likes: 5, saves: 1, seq: 7, writes: 9 });
    await head(key).report(1, { likes: 2, saves: 0, seq: 1, writes: 2 });
    expect((await head(key).read()).counts).toMatchObject({ likes: 7, saves: 1 });
    await head(key).report(2, { likes: 4, saves: 1, seq: 8, writes: 10 });
    expect((await head(key).read()).counts).toMatchObject({ likes: 6, saves: 1 });
  });

  it("refuses the admin view to a user token", async () => {
    const u = await newUser();
    expect((await call("GET", `/v1/admin/items/post/${freshId()}`, { token: u.token })).status).toBe(403);
  });
});
