import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, freshId, json, like, newUser } from "./helpers";

const itemStub = (key: string) => env.ITEM_COUNTER.get(env.ITEM_COUNTER.idFromName(key));

async function objectReads(keys: string[]): Promise<number> {
  let total = 0;
  for (const key of keys) total += await runInDurableObject(itemStub(key), (instance) => instance.stats.reads);
  return total;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("feed reads", () => {
  it("reads 50 distinct items with at most 50 object calls cold, and none within the TTL", async () => {
    const ids = Array.from({ length: 50 }, () => freshId());
    const keys = ids.map((id) => `post:${id}`);
    const items = ids.map((item_id) => ({ item_id, item_type: "post" }));
    const cold = await call("POST", "/v1/counts", { body: { items } });
    expect(cold.status).toBe(200);
    const body = await json(cold);
    expect(Object.keys(body.counts)).toHaveLength(50);
    expect(body.counts[keys[0]!]).toEqual({ likes: 0, views: 0, shares: 0, saves: 0 });
    expect(await objectReads(keys)).toBeLessThanOrEqual(50);
    const before = await objectReads(keys);
    const warm = await call("POST", "/v1/counts", { body: { items } });
    expect(warm.status).toBe(200);
    expect(await objectReads(keys)).toBe(before);
  });

  it("answers a repeated item once", async () => {
    const id = freshId();
    const res = await call("POST", "/v1/counts", {
      body: { items: [{ item_id: id, item_type: "post" }, { item_id: id, item_type: "post" }, { item_id: id, item_type: "reel" }] },
    });
    expect(Object.keys((await json(res)).counts).sort()).toEqual([`post:${id}`, `reel:${id}`]);
  });

  it("shares one object call among 100 concurrent reads of one item", async () => {
    const id = freshId();
    const answers = await Promise.all(
      Array.from({ length: 100 }, () => call("GET", `/v1/count?item_id=${id}&item_type=post`)),
    );
    expect(answers.every((r) => r.status === 200)).toBe(true);
    expect(await objectReads([`post:${id}`])).toBe(1);
  });

  it("caches an untouched item like any other, and creates no storage for it", async () => {
    const id = freshId();
    const first = await json(await call("GET", `/v1/count?item_id=${id}&item_type=comment`));
    const second = await json(await call("GET", `/v1/count?item_id=${id}&item_type=comment`));
    expect(first.cached).toBe(false);
    expect(second.cached).toBe(true);
    expect(second.counts).toEqual({ likes: 0, views: 0, shares: 0, saves: 0 });
    await runInDurableObject(itemStub(`comment:${id}`), (instance, state) => {
      expect(instance.stats.reads).toBe(1);
      expect(state.storage.sql.exec("SELECT name FROM sqlite_master").toArray()).toEqual([]);
    });
  });

  it("shows a user their own like at once, though the count was cached before", async () => {
    const user = await newUser();
    const id = freshId();
    expect((await json(await call("GET", `/v1/count?item_id=${id}&item_type=post`))).counts.likes).toBe(0);
    await like(user.token, id);
    const after = await json(await call("GET", `/v1/count?item_id=${id}&item_type=post`));
    expect(after.cached).toBe(true);
    expect(after.counts.likes).toBe(1);
  });

  it("filters the answer by counter_types and refuses unknown types", async () => {
    const id = freshId();
    const res = await call("POST", "/v1/counts", {
      body: { items: [{ item_id: id, item_type: "post" }], counter_types: ["likes", "views"] },
    });
    expect((await json(res)).counts[`post:${id}`]).toEqual({ likes: 0, views: 0 });
    const bad = await call("POST", "/v1/counts", {
      body: { items: [{ item_id: id, item_type: "post" }], counter_types: ["claps"] },
    });
    expect(bad.status).toBe(400);
    expect((await json(bad)).details[0].path).toBe("counter_types.0");
  });
});

describe("degraded reads", () => {
  it("serves the last known value with X-Stale-Data when the item's object fails", async () => {
    const user = await newUser();
    const id = freshId();
    await like(user.token, id);
    await runInDurableObject(itemStub(`post:${id}`), (instance) => {
      instance.faults.readFailures = 100;
    });
    await sleep(2_100);
    const res = await call("GET", `/v1/count?item_id=${id}&item_type=post`);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-stale-data")).toBe("true");
    expect((await json(res)).counts.likes).toBe(1);
    const batch = await call("POST", "/v1/counts", { body: { items: [{ item_id: id, item_type: "post" }] } });
    expect(batch.headers.get("x-stale-data")).toBe("true");
    expect((await json(batch)).counts[`post:${id}`].likes).toBe(1);
  });

  it("falls back on D1's stored counts when this isolate knows nothing", async () => {
    const id = freshId();
    await env.DB.prepare(
      "INSERT INTO counters (item_type, item_id, counter, count, seq, updated_at) VALUES ('post', ?, 'likes', 7, 1, ?)",
    )
      .bind(id, Date.now())
      .run();
    await runInDurableObject(itemStub(`post:${id}`), (instance) => {
      instance.faults.readFailures = 100;
    });
    const res = await call("GET", `/v1/count?item_id=${id}&item_type=post`);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-stale-data")).toBe("true");
    expect((await json(res)).counts).toEqual({ likes: 7, views: 0, shares: 0, saves: 0 });
  });

  it("answers 503 with Retry-After when nothing at all is known", async () => {
    const id = freshId();
    await runInDurableObject(itemStub(`post:${id}`), (instance) => {
      instance.faults.readFailures = 100;
    });
    const res = await call("GET", `/v1/count?item_id=${id}&item_type=post`);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBeTruthy();
    expect((await json(res)).error).toBe("unavailable");
  });

  it("marks unreadable items null and the answer partial", async () => {
    const [good, bad] = [freshId(), freshId()];
    await runInDurableObject(itemStub(`post:${bad}`), (instance) => {
      instance.faults.readFailures = 100;
    });
    const res = await call("POST", "/v1/counts", {
      body: { items: [{ item_id: good, item_type: "post" }, { item_id: bad, item_type: "post" }] },
    });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.partial).toBe(true);
    expect(body.counts[`post:${bad}`]).toBeNull();
    expect(body.counts[`post:${good}`]).toEqual({ likes: 0, views: 0, shares: 0, saves: 0 });
  });
});
