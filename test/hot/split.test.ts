import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { childFor } from "../../shared/placement";
import { call, freshId, json, like, tokenFor } from "../workers/helpers";
import { SHARDS, delivered, head, users, makeHot, settledLikes, homeOf } from "./hot-helpers";

describe("hot items split", () => {
  it("splits an item under a burst of distinct likers, and its count stays exact", async () => {
    const id = freshId();
    const key = `post:${id}`;
    const before = await makeHot(id);
    const after = await users(40);
    await Promise.all(after.map((u) => like(u.token, id)));
    expect(await settledLikes(key, before.length + after.length)).toBe(before.length + after.length);

    const service = await tokenFor(freshId(), { role: "service" });
    const res = await call("GET", `/v1/admin/items/post/${id}`, { token: service });
    expect(res.status).toBe(200);
    const admin = await json(res);
    expect(admin).toMatchObject({ item_id: id, item_type: "post", hot: true, shards: SHARDS });
    expect(admin.counts.likes).toBe(before.length + after.length);
    expect(admin.children.length).toBeGreaterThan(0);
    expect(admin.writes_per_sec).toBeGreaterThan(0);
    for (const u of after) expect(await homeOf(u.id, key)).toBe(childFor(u.id, SHARDS));
  });

  it("lets the head apply at most 1/N of the writes once the item is split, refusals aside", async () => {
    const id = freshId();
    const key = `post:${id}`;
    const before = await makeHot(id);
    const start = await runInDurableObject(head(key), (instance) => ({ ...instance.stats }));
    const after = await users(80);
    for (let i = 0; i < after.length; i += 10) {
      await Promise.all(after.slice(i, i + 10).map((u) => like(u.token, id)));
    }
    expect(await delivered(after.map((u) => u.id))).toBe(true);
    const end = await runInDurableObject(head(key), (instance) => ({ ...instance.stats }));
    expect(end.applies - start.applies - (end.refused - start.refused)).toBeLessThanOrEqual(after.length / SHARDS);
    expect(await settledLikes(key, before.length + after.length)).toBe(before.length + after.length);
  });
});
