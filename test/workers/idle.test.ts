import { abortAllDurableObjects, listDurableObjectIds, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { config } from "../../shared/config";
import { itemKey } from "../../shared/counters";
import { indexDraw } from "../../shared/item-index";
import { latestPass } from "../../workers/stores/passes";
import { tickPasses } from "../../workers/pipeline/pass-tick";
import { indexDatabaseFor } from "../../workers/stores/count-databases";
import { settingsForWrite } from "../../workers/privacy/item-settings";
import { settingsForItem } from "../../workers/likes/write-settings";
import { AfterAnswer } from "../../workers/lib/after-answer";
import { call, freshId, like, newUser, tokenFor } from "./helpers";
import { sample, scrape, total, type Family } from "./metrics-exposition";

const itemStub = (key: string) => env.ITEM_COUNTER.get(env.ITEM_COUNTER.idFromName(key));
const userStub = (id: string) => env.USER_LIKES.get(env.USER_LIKES.idFromName(`u:${id}`));

/** What an object has left to do: its alarm, and what its outboxes hold (0 for a table it does not have). */
function leftovers(_: unknown, state: DurableObjectState) {
  const sql = state.storage.sql;
  const tables = new Set(sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'").toArray().map((t) => t.name));
  // A user's outbox is the list in its state row; an item's emissions are the list in its state row's emit_ columns.
  const columns = tables.has("state") ? new Set(sql.exec<{ name: string }>("SELECT name FROM pragma_table_info('state')").toArray().map((c) => c.name)) : new Set();
  const outbox = columns.has("outbox") ? (JSON.parse(sql.exec<{ outbox: string }>("SELECT outbox FROM state").one().outbox) as unknown[]).length : 0;
  const emission = columns.has("emit_edges")
    ? sql.exec<{ seq: number; acked_seq: number; edges: string }>("SELECT emit_seq AS seq, emit_acked_seq AS acked_seq, emit_edges AS edges FROM state").toArray()[0]
    : undefined;
  return state.storage.getAlarm().then((alarm) => ({
    alarm,
    outbox,
    emissions: emission ? (JSON.parse(emission.edges) as unknown[]).length : 0,
    unackedSnapshots: emission ? emission.seq - emission.acked_seq : 0,
  }));
}

describe("an idle system does no work", () => {
  it("leaves no alarm and nothing to resend in any object after a like and a drain, once every object is evicted", async () => {
    const user = await newUser();
    const id = freshId();
    const key = `post:${id}`;
    expect((await like(user.token, id)).status).toBe(200);
    // The drain: delivered, emitted, written by the aggregator, acknowledged, and the acknowledgements stored.
    const quiet = { alarm: null, outbox: 0, emissions: 0, unackedSnapshots: 0 };
    await expect.poll(() => runInDurableObject(userStub(user.id), leftovers), { timeout: 20_000, interval: 200 }).toEqual(quiet);
    await expect.poll(() => runInDurableObject(itemStub(key), leftovers), { timeout: 20_000, interval: 200 }).toEqual(quiet);

    // Memory is a cache: what ends every resend must be in storage.
    await abortAllDurableObjects();
    const namespaces = [env.USER_LIKES, env.ITEM_COUNTER, env.ITEM_SHARD] as unknown as DurableObjectNamespace[];
    for (const namespace of namespaces) {
      for (const objectId of await listDurableObjectIds(namespace)) {
        expect(await runInDurableObject(namespace.get(objectId), leftovers)).toEqual(quiet);
      }
    }
  });

  it("starts no reconciliation pass over an index with items when no item changed since the last pass began", async () => {
    const item = `post:${freshId()}`;
    await indexDatabaseFor(env, item).prepare("INSERT OR IGNORE INTO item_index (draw, item) VALUES (?, ?)").bind(indexDraw(item), item).run();
    // The last pass began after every count stored so far (and any a drain of the tests above still writes).
    const began = Date.now() + 600_000;
    await env.DB.prepare("INSERT INTO passes (id, kind, ranges, concurrency, step_items, items_per_second, started_at, finished_at) VALUES (?, 'reconcile', 16, 4, 100, 1, ?, ?)")
      .bind(`reconcile:${began}`, began, began + 1)
      .run();
    await tickPasses(env, began + config(env).RECONCILE_FULL_PASS_HOURS * 3_600_000 + 1);
    expect((await latestPass(env, "reconcile"))?.id).toBe(`reconcile:${began}`);
  });

  it("counts every commit, row written, alarm set and object call a like costs", async () => {
    const service = await tokenFor(freshId(), { role: "service" });
    const before = await scrape(service);
    const user = await newUser();
    expect((await like(user.token, freshId())).status).toBe(200);
    const grew = async (name: string, labels: Record<string, string>) => sample(await scrape(service), name, labels) - sample(before, name, labels);
    await expect.poll(() => grew("plaudit_object_calls_total", { caller: "user_likes", object: "item_counter" }), { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    for (const object of ["user_likes", "item_counter"]) {
      await expect.poll(() => grew("plaudit_storage_commits_total", { object }), { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
      await expect.poll(() => grew("plaudit_storage_rows_written_total", { object }), { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
      await expect.poll(() => grew("plaudit_storage_alarms_set_total", { object }), { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    }
  });

  it("reads the store once for a like of an item its isolate knows nothing of, and not at all for the next like of it", async () => {
    const service = await tokenFor(freshId(), { role: "service" });
    const id = freshId();
    // The like's own reads: the item's settings for the check and its counts for the answer.
    const likeReads = (families: Family[]) =>
      total(families, "plaudit_d1_queries_total", (labels) => labels.caller === "item_settings" || labels.caller === "write_answer");
    const liked = (families: Family[]) => sample(families, "plaudit_toggle_outcomes_total", { counter: "likes", outcome: "liked" });
    for (const expected of [1, 0]) {
      const before = await scrape(service);
      expect((await like((await newUser()).token, id)).status).toBe(200);
      // The like's metrics arrive in one flush: once its outcome is counted, so are its reads.
      await expect.poll(async () => liked(await scrape(service)) - liked(before), { timeout: 10_000 }).toBe(1);
      expect(likeReads(await scrape(service)) - likeReads(before)).toBe(expected);
    }
  });

  it("makes no query before the answer of a like of an item a feed just showed", async () => {
    const service = await tokenFor(freshId(), { role: "service" });
    const ids = [freshId(), freshId(), freshId()];
    const critical = (families: Family[]) => total(families, "plaudit_d1_queries_total", (labels) => labels.path === "critical");
    const liked = (families: Family[]) => sample(families, "plaudit_toggle_outcomes_total", { counter: "likes", outcome: "liked" });
    const feed = await call("POST", "/v1/counts", { body: { items: ids.map((item_id) => ({ item_id, item_type: "post" })) } });
    expect(feed.status).toBe(200);
    const before = await scrape(service);
    // The feed brought each item's settings and counts along: a like of any of them has what its check and answer need.
    for (const id of ids) expect((await like((await newUser()).token, id)).status).toBe(200);
    await expect.poll(async () => liked(await scrape(service)) - liked(before), { timeout: 10_000 }).toBe(ids.length);
    expect(critical(await scrape(service)) - critical(before)).toBe(0);
  });

  it("checks a like against settings past their TTL without a query before the answer, and refreshes them after it, though a cut-off request asked first", async () => {
    const service = await tokenFor(freshId(), { role: "service" });
    const id = freshId();
    const critical = (families: Family[]) => total(families, "plaudit_d1_queries_total", (labels) => labels.path === "critical");
    const refreshes = (families: Family[]) => total(families, "plaudit_d1_queries_total", (labels) => labels.caller === "item_settings_refresh");
    const liked = (families: Family[]) => sample(families, "plaudit_toggle_outcomes_total", { counter: "likes", outcome: "liked" });
    expect((await like((await newUser()).token, id)).status).toBe(200);
    await expect.poll(async () => critical(await scrape(service)), { timeout: 10_000 }).toBeGreaterThan(0);
    // The settings this isolate keeps for the item (the test shares the Worker's isolate) pass
    // PRIVACY_CACHE_TTL_MS (5 s here) with time alone: their age is the condition waited for.
    const key = itemKey("post", id);
    await expect.poll(() => settingsForWrite(env, key, Date.now())?.fresh, { timeout: 30_000, interval: 100 }).toBe(false);
    const before = await scrape(service);
    // A request that asked for a refresh and was cut off before its answer never begins it: the next like's refresh still runs.
    await settingsForItem({ env, ctx: { waitUntil: () => {} } }, new AfterAnswer({ waitUntil: () => {} }), key);

    // The next like finds them past their TTL: checked against them with no query before its answer, and refreshed after it.
    expect((await like((await newUser()).token, id)).status).toBe(200);
    await expect.poll(async () => liked(await scrape(service)) - liked(before), { timeout: 10_000 }).toBe(1);
    await expect.poll(async () => refreshes(await scrape(service)), { timeout: 10_000 }).toBeGreaterThan(refreshes(before));
    expect(critical(await scrape(service)) - critical(before)).toBe(0);
  });
});
