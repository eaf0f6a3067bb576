import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { config } from "../../shared/config";
import { call, freshId, json, newUser } from "./helpers";

const itemStub = (key: string) => env.ITEM_COUNTER.get(env.ITEM_COUNTER.idFromName(key));
const itemStats = (key: string) => runInDurableObject(itemStub(key), (instance) => ({ ...instance.stats }));

const view = (token: string, item_id: string, key?: string) =>
  call("POST", "/v1/view", { token, body: { item_id, item_type: "post" }, headers: key ? { "idempotency-key": key } : {} });

/** Waits, with a bound, for the isolate's event flush (about a second after the request) to bring the item's count to `expected`. */
async function reaches(key: string, counter: "views" | "shares", expected: number): Promise<void> {
  await expect.poll(async () => (await itemStub(key).read()).counts[counter], { timeout: 8_000, interval: 100 }).toBe(expected);
}

describe("views and shares", () => {
  it("counts a view and answers with the count", async () => {
    const user = await newUser();
    const id = freshId();
    const res = await view(user.token, id);
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ status: "counted", count: 1, count_formatted: "1" });
    await reaches(`post:${id}`, "views", 1);
  });

  it("ends 1,000 views of one item at 1,000, calling the object about once a second, not once a view", async () => {
    const id = freshId();
    const key = `post:${id}`;
    const users = await Promise.all(Array.from({ length: 10 }, () => newUser()));
    const started = Date.now();
    for (let round = 0; round < 20; round++) {
      const answers = await Promise.all(
        users.flatMap((u) => Array.from({ length: 5 }, () => view(u.token, id))),
      );
      expect(answers.every((r) => r.status === 200)).toBe(true);
    }
    const elapsed = Date.now() - started;
    // What the views themselves cost the object, before this test starts reading it.
    const reads = (await itemStats(key)).reads;
    await reaches(key, "views", 1000);
    // The object persists events shortly after taking them: wait for the first commit, then compare.
    await expect.poll(async () => (await itemStats(key)).commits, { timeout: 8_000, interval: 100 }).toBeGreaterThan(0);
    const calls = await itemStats(key);
    // The isolate sends an item's events once per flush interval and caches its counts for the memory TTL;
    // the bounds follow from the run's length, so a slow machine does not break them and a call per view does.
    const { EVENT_FLUSH_MS, READ_CACHE_MEMORY_TTL_MS } = config(env);
    expect(calls.eventBatches).toBeGreaterThan(0);
    expect(calls.eventBatches).toBeLessThanOrEqual(Math.ceil(elapsed / EVENT_FLUSH_MS) + 1);
    expect(reads).toBeLessThanOrEqual(Math.ceil(elapsed / READ_CACHE_MEMORY_TTL_MS) + 1);
    expect(calls.commits).toBeLessThanOrEqual(calls.eventBatches);
  });

  it("counts a view retried with the same Idempotency-Key once, across flushes", async () => {
    const user = await newUser();
    const id = freshId();
    const key = `post:${id}`;
    expect((await view(user.token, id, "view-abc")).status).toBe(200);
    expect((await view(user.token, id, "view-abc")).status).toBe(200);
    await reaches(key, "views", 1);
    // Nothing else is waiting for this item now, so the retry alone makes the object's next batch.
    const batches = (await itemStats(key)).eventBatches;
    expect((await view(user.token, id, "view-abc")).status).toBe(200);
    await expect.poll(async () => (await itemStats(key)).eventBatches, { timeout: 8_000, interval: 100 }).toBe(batches + 1);
    expect((await itemStub(key).read()).counts.views).toBe(1);
    await view(user.token, id, "view-def");
    await reaches(key, "views", 2);
  });

  it("does not let another user's identical Idempotency-Key cancel a view", async () => {
    const [a, b] = [await newUser(), await newUser()];
    const id = freshId();
    await view(a.token, id, "same-key");
    await view(b.token, id, "same-key");
    await reaches(`post:${id}`, "views", 2);
  });

  it("counts shares separately from views", async () => {
    const user = await newUser();
    const id = freshId();
    const res = await call("POST", "/v1/share", { token: user.token, body: { item_id: id, item_type: "post" } });
    expect(await json(res)).toEqual({ status: "counted", count: 1, count_formatted: "1" });
    await reaches(`post:${id}`, "shares", 1);
    expect((await itemStub(`post:${id}`).read()).counts.views).toBe(0);
  });

  it("limits shares per user per minute with 429", async () => {
    const user = await newUser();
    const id = freshId();
    for (let i = 0; i < 30; i++) {
      expect((await call("POST", "/v1/share", { token: user.token, body: { item_id: id, item_type: "post" } })).status).toBe(200);
    }
    const res = await call("POST", "/v1/share", { token: user.token, body: { item_id: id, item_type: "post" } });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBeTruthy();
  });

  it("refuses an invalid Idempotency-Key with 400", async () => {
    const user = await newUser();
    const res = await view(user.token, freshId(), "has spaces in it");
    expect(res.status).toBe(400);
    expect((await json(res)).details[0].path).toBe("headers.idempotency-key");
  });

  it("needs a token", async () => {
    expect((await call("POST", "/v1/view", { body: { item_id: "1", item_type: "post" } })).status).toBe(401);
  });
});

describe("saves", () => {
  const save = (token: string, item_id: string, method = "POST") =>
    call(method, "/v1/save", { token, body: { item_id, item_type: "reel" } });

  it("saves once, answers already_saved, unsaves, and never goes negative", async () => {
    const user = await newUser();
    const id = freshId();
    expect(await json(await save(user.token, id))).toEqual({ status: "saved", count: 1, count_formatted: "1", user_saved: true });
    expect((await json(await save(user.token, id))).status).toBe("already_saved");
    expect(await json(await save(user.token, id, "DELETE"))).toEqual({
      status: "unsaved",
      count: 0,
      count_formatted: "0",
      user_saved: false,
    });
    expect((await json(await save(user.token, id, "DELETE"))).status).toBe("not_saved");
    // The answer comes after the user's commit; the item side applies the unsave a moment later.
    await vi.waitFor(async () => expect((await itemStub(`reel:${id}`).read()).counts.saves).toBe(0), { timeout: 10_000, interval: 50 });
  });

  it("counts one save from 20 concurrent saves by one user, and keeps likes apart", async () => {
    const user = await newUser();
    const id = freshId();
    const answers = await Promise.all(Array.from({ length: 20 }, () => save(user.token, id).then((r) => json(r))));
    expect(answers.filter((a) => a.status === "saved")).toHaveLength(1);
    // The answer comes before the item side has the save.
    await expect.poll(async () => (await itemStub(`reel:${id}`).read()).counts.saves, { timeout: 10_000 }).toBe(1);
    expect((await itemStub(`reel:${id}`).read()).counts.likes).toBe(0);
  });

  it("counts 25 users saving at once as 25", async () => {
    const id = freshId();
    const users = await Promise.all(Array.from({ length: 25 }, () => newUser()));
    await Promise.all(users.map((u) => save(u.token, id)));
    await expect.poll(async () => (await itemStub(`reel:${id}`).read()).counts.saves, { timeout: 10_000 }).toBe(25);
  });
});
