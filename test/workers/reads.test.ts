import { createExecutionContext, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { config } from "../../shared/config";
import { ownWriteReachMs } from "../../shared/own-writes";
import { zeroCounts } from "../../shared/counters";
import { byCountDatabase, countDatabases } from "../../workers/stores/count-databases";
import { writeSnapshots } from "../../workers/stores/item-counts";
import { resetBreakers } from "../../workers/stores/breakers";
import { edgePut } from "../../workers/reads/edge-cache";
import { call, freshId, json, like, newUser, tokenFor } from "./helpers";
import { sample, scrape, total } from "./metrics-exposition";
import { readCounts, readMany } from "../../workers/reads/count-reader";
import { withVars } from "./idp";
import { central } from "./pipeline-helpers";
import { MAX_ROUND_TRIPS, readBookmark } from "../../workers/stores/item-counts";
import { failNext } from "./fault-points";

const K = config(env).COUNT_DATABASES;
const READ_ROUTES = ["/v1/count", "/v1/counts"];
const itemStub = (key: string) => env.ITEM_COUNTER.get(env.ITEM_COUNTER.idFromName(key));

let service: string;
beforeAll(async () => {
  service = await tokenFor(freshId(), { role: "service" });
});


/** What the read routes cost: object calls, D1 queries and rows read, store round trips and store reads by their round trips, as /metrics counts them. */
async function readCosts() {
  const families = await scrape(service);
  const fromReads = (labels: Record<string, string>) => READ_ROUTES.includes(labels.caller ?? "");
  return {
    objectCalls: total(families, "plaudit_object_calls_total", fromReads),
    d1Queries: total(families, "plaudit_d1_queries_total", fromReads),
    d1RowsRead: total(families, "plaudit_d1_rows_read_total", fromReads),
    roundTrips: total(families, "plaudit_store_round_trips_total", fromReads),
    storeReads: total(families, "plaudit_store_reads_total", fromReads),
    overBound: total(families, "plaudit_store_reads_total", (labels) => fromReads(labels) && Number(labels.round_trips) > MAX_ROUND_TRIPS),
  };
}

/** Stores counts for items as the aggregator would: each in its own database, with a sequence and the time the head took them. */
async function storeCounts(counts: ReadonlyMap<string, number>, seq = 1, now = Date.now(), countedAt?: number): Promise<void> {
  for (const [db, group] of byCountDatabase(env, [...counts], ([item]) => item)) {
    const snapshots = new Map(group.map(([item, likes]) => [item, { seq, counts: { ...zeroCounts(), likes }, ...(countedAt === undefined ? {} : { at: countedAt }) }]));
    await writeSnapshots(env, db, snapshots, { items: [] }, now, "seed");
  }
}

/** Stores the same counts in the central store, as the aggregator would. */
async function storeCentral(counts: ReadonlyMap<string, number>, seq = 1): Promise<void> {
  const store = await central();
  const entries = [...counts];
  for (let i = 0; i < entries.length; i += 25) {
    await Promise.all(entries.slice(i, i + 25).map(([item, likes]) => store.writeSnapshot(item, { seq, counts: { ...zeroCounts(), likes } })));
  }
}

/** The row the store holds for an item: when it was written and when its counts were taken. */
async function storedRow(key: string) {
  const [db] = byCountDatabase(env, [key], (item) => item).keys();
  return await db!
    .prepare("SELECT likes, updated_at, counted_at FROM item_counts WHERE item_type = ?1 AND item_id = ?2")
    .bind(...key.split(":"))
    .first<{ likes: number; updated_at: number; counted_at: number }>();
}

/** Runs `work` while every count database fails its reads (the counts table is renamed away). */
async function withStoreFailing(work: () => Promise<void>): Promise<void> {
  for (const db of countDatabases(env)) await db.prepare("ALTER TABLE item_counts RENAME TO item_counts_offline").run();
  try {
    await work();
  } finally {
    for (const db of countDatabases(env)) await db.prepare("ALTER TABLE item_counts_offline RENAME TO item_counts").run();
    // The store is back: forget the breakers this isolate opened while it was not.
    resetBreakers();
  }
}

const items = (keys: string[]) => keys.map((key) => ({ item_type: key.split(":")[0]!, item_id: key.split(":")[1]! }));
const countOne = (key: string) => call("GET", `/v1/count?item_id=${key.split(":")[1]}&item_type=${key.split(":")[0]}`);

describe("feed reads", () => {
  it(`reads a long tail of 5,000 cold items from the stores: no object call, at most ${MAX_ROUND_TRIPS} store round trips a feed (K = ${K})`, async () => {
    const keys = Array.from({ length: 5_000 }, () => `post:${freshId()}`);
    const liked = new Map(keys.filter((_, i) => i % 10 === 0).map((key, i) => [key, (i % 7) + 1]));
    await storeCounts(liked);
    await storeCentral(liked);
    const before = await readCosts();
    for (let i = 0; i < keys.length; i += 50) {
      const feed = keys.slice(i, i + 50);
      const res = await call("POST", "/v1/counts", { body: { items: items(feed), counter_types: ["likes"] } });
      expect(res.status).toBe(200);
      const { counts } = await json(res);
      for (const key of feed) expect(counts[key]).toEqual({ likes: liked.get(key) ?? 0 });
    }
    const after = await readCosts();
    const feeds = keys.length / 50;
    expect(after.objectCalls - before.objectCalls).toBe(0);
    // Every feed missed every cache: one store read each, none past the bound, whatever K.
    expect(after.storeReads - before.storeReads).toBe(feeds);
    expect(after.overBound - before.overBound).toBe(0);
    expect(after.roundTrips - before.roundTrips).toBeGreaterThanOrEqual(feeds);
    expect(after.roundTrips - before.roundTrips).toBeLessThanOrEqual(feeds * Math.min(K, MAX_ROUND_TRIPS));
    // Up to two databases: one query to each. Past that: none, the central store answers the feed.
    if (K <= MAX_ROUND_TRIPS) {
      expect(after.d1Queries - before.d1Queries).toBeGreaterThanOrEqual(feeds);
      expect(after.d1Queries - before.d1Queries).toBeLessThanOrEqual(feeds * K);
    } else {
      expect(after.d1Queries - before.d1Queries).toBe(0);
    }
    // Looked up by key, not scanned: about four rows per item (its parameter and its lookup, in each
    // half of the query: counts and settings), where a scan would read the whole table (over 500 rows)
    // in every query.
    expect(after.d1RowsRead - before.d1RowsRead).toBeLessThanOrEqual(keys.length * 5);

    // The positive control: a single read of an unknown item while the store fails asks the item's object.
    const unknown = `post:${freshId()}`;
    await withStoreFailing(async () => {
      const res = await countOne(unknown);
      expect(res.status).toBe(200);
      expect((await json(res)).counts).toEqual(zeroCounts());
    });
    expect((await readCosts()).objectCalls - after.objectCalls).toBe(1);
    // 100 feeds and 5,500 stored rows: generous on a shared two-core machine; nothing here is timed.
  }, 600_000);

  it("answers a repeated item once", async () => {
    const id = freshId();
    const res = await call("POST", "/v1/counts", {
      body: { items: [{ item_id: id, item_type: "post" }, { item_id: id, item_type: "post" }, { item_id: id, item_type: "reel" }] },
    });
    expect(Object.keys((await json(res)).counts).sort()).toEqual([`post:${id}`, `reel:${id}`]);
  });

  it("shares one store query among 100 concurrent reads of one item", async () => {
    const key = `post:${freshId()}`;
    await storeCounts(new Map([[key, 4]]));
    const before = await readCosts();
    const answers = await Promise.all(Array.from({ length: 100 }, () => countOne(key)));
    expect(answers.every((r) => r.status === 200)).toBe(true);
    for (const answer of answers) expect((await json(answer)).counts.likes).toBe(4);
    expect((await readCosts()).d1Queries - before.d1Queries).toBe(1);
  });

  it("reads the misses of feeds that reach the store together in one store read, up to one feed's worth of items", async () => {
    // Five feeds of 20 items each, all five naming 5 more; 105 items in all, one in three counted.
    const shared = Array.from({ length: 5 }, () => `post:${freshId()}`);
    const feeds = Array.from({ length: 5 }, () => [...Array.from({ length: 20 }, () => `post:${freshId()}`), ...shared]);
    const all = [...new Set(feeds.flat())];
    const liked = new Map(all.filter((_, i) => i % 3 === 0).map((key, i) => [key, (i % 5) + 1]));
    await storeCounts(liked);
    await storeCentral(liked);
    // Without the Cache API tier, the five reach the store in the same turn of the event loop.
    const rt = { env: withVars({ READ_CACHE_EDGE_TTL_MS: "0" }), ctx: createExecutionContext() };
    const lookups = async () => {
      const families = await scrape(service);
      return { miss: sample(families, "plaudit_cache_lookups_total", { cache: "all", result: "miss" }), flight: sample(families, "plaudit_cache_lookups_total", { cache: "flight", result: "hit" }) };
    };
    const before = { ...(await readCosts()), ...(await lookups()) };
    const answers = await Promise.all(feeds.map((feed) => readMany(rt, feed, "/v1/counts")));
    const after = { ...(await readCosts()), ...(await lookups()) };
    answers.forEach((answer, i) => {
      for (const key of feeds[i]!) expect(answer.get(key)?.counts.likes).toBe(liked.get(key) ?? 0);
    });
    // The first four feeds' 85 items in one read; the fifth's 20 would take that read past 100 items, so they are a second.
    expect(after.storeReads - before.storeReads).toBe(2);
    expect(after.overBound - before.overBound).toBe(0);
    // Each item missed once; only the 5 items four later feeds found in flight are flight hits.
    expect(after.miss - before.miss).toBe(all.length);
    expect(after.flight - before.flight).toBe(4 * shared.length);
    expect(after.objectCalls - before.objectCalls).toBe(0);
  });

  it.skipIf(K <= MAX_ROUND_TRIPS)("answers a feed that joined another's read when the central store hangs and that read falls back to the databases", async () => {
    // Two feeds of 20 items, all counted: the second joins the first's read, which asks the central store (40 items over K > 2
    // databases), waits out READ_STORE_TIMEOUT_MS (its default, 1 s) on a store that never answers, then asks the databases.
    const keys = Array.from({ length: 40 }, () => `post:${freshId()}`);
    const liked = new Map(keys.map((key, i) => [key, (i % 5) + 1]));
    await storeCounts(liked);
    const rt = { env: withVars({ READ_CACHE_EDGE_TTL_MS: "0", ALTERNATOR_ENDPOINT: env.TEST_HANGING_ENDPOINT }), ctx: createExecutionContext() };
    const trips = async () => {
      const families = await scrape(service);
      const of = (store: string) => total(families, "plaudit_store_round_trips_total", (labels) => labels.caller === "/v1/counts" && labels.store === store);
      return { central: of("central"), d1: of("d1"), reads: (await readCosts()).storeReads };
    };
    const before = await trips();
    const [first, second] = await Promise.all([readMany(rt, keys.slice(0, 20), "/v1/counts"), readMany(rt, keys.slice(20), "/v1/counts")]);
    const after = await trips();
    // One read for both feeds: a trip to the central store that hung, then the databases.
    expect(after.reads - before.reads).toBe(1);
    expect(after.central - before.central).toBe(1);
    expect(after.d1 - before.d1).toBeGreaterThanOrEqual(1);
    // The request that joined it was answered as its reader was: fresh counts, none stale or missing.
    for (const [answer, feed] of [[first, keys.slice(0, 20)], [second, keys.slice(20)]] as const) {
      for (const key of feed) {
        expect(answer.get(key)?.counts.likes).toBe(liked.get(key));
        expect(answer.get(key)?.stale).toBe(false);
      }
    }
  });

  it("reads each like's answer from the store at once, never in a read held open for others", async () => {
    // Five likes' answers missing the caches in the same turn: joined, they would be one store read.
    const keys = Array.from({ length: 5 }, () => `post:${freshId()}`);
    const liked = new Map(keys.map((key, i) => [key, i + 1]));
    await storeCounts(liked);
    const rt = { env: withVars({ READ_CACHE_EDGE_TTL_MS: "0" }), ctx: createExecutionContext() };
    const storeReads = async () => total(await scrape(service), "plaudit_store_reads_total", (labels) => labels.caller === "write_answer");
    const before = await storeReads();
    const answers = await Promise.all(keys.map((key) => readCounts(rt, key, "write_answer", "critical")));
    answers.forEach((answer, i) => expect(answer.counts.likes).toBe(liked.get(keys[i]!)));
    expect((await storeReads()) - before).toBe(keys.length);
  });

  it("caches an untouched item like any other, and wakes no object for it", async () => {
    const key = `comment:${freshId()}`;
    const before = await readCosts();
    const first = await json(await countOne(key));
    const second = await json(await countOne(key));
    expect(first.cached).toBe(false);
    expect(second.cached).toBe(true);
    expect(second.counts).toEqual(zeroCounts());
    const after = await readCosts();
    expect(after.objectCalls - before.objectCalls).toBe(0);
    expect(after.d1Queries - before.d1Queries).toBe(1);
  });

  it("shows a user their own like at once, and keeps showing it while the store is behind", async () => {
    const user = await newUser();
    const key = `post:${freshId()}`;
    expect((await json(await countOne(key))).counts.likes).toBe(0);
    const beforeLike = Date.now() - 1;
    await like(user.token, key.split(":")[1]!);
    // A row older than the like that the pipeline cannot replace: the store stays behind for good.
    await storeCounts(new Map([[key, 0]]), 2 ** 40, beforeLike);
    const queries = (await readCosts()).d1Queries;
    await vi.waitFor(
      async () => {
        const read = await json(await countOne(key));
        expect(read.counts.likes).toBe(1);
        // Polls until the memory entry expired and the store was asked again.
        expect((await readCosts()).d1Queries).toBeGreaterThan(queries);
      },
      { timeout: 10_000, interval: 100 },
    );
    expect((await json(await countOne(key))).counts.likes).toBe(1);
  });

  it("keeps a user's own like when a row stored after it holds counts taken before it (A likes, B likes, A's row lands)", async () => {
    const [a, b] = [await newUser(), await newUser()];
    const key = `post:${freshId()}`;
    const id = key.split(":")[1]!;
    const readAsB = async () => (await json(await call("GET", `/v1/count?item_id=${id}&item_type=post`, { token: b.token }))).counts.likes as number;
    expect(await readAsB()).toBe(0);
    expect((await json(await like(a.token, id))).count).toBe(1);
    // The head takes the counts of A's like before B's like reaches it.
    const countedBeforeB = Date.now();
    expect((await json(await like(b.token, id))).count).toBe(2);
    const bAnswered = Date.now();
    // That snapshot's row is stored after B's answer, and the pipeline cannot replace it (its sequence is higher than any the head will emit).
    await storeCounts(new Map([[key, 1]]), 2 ** 40, Date.now(), countedBeforeB);
    const row = await storedRow(key);
    // The control: stored after B's like (what the reader compared before), counted before it.
    expect(row).toEqual({ likes: 1, updated_at: expect.any(Number), counted_at: countedBeforeB });
    expect(row!.updated_at).toBeGreaterThanOrEqual(bAnswered);

    const seen: number[] = [];
    const queries = (await readCosts()).d1Queries;
    // B reads until the store has been asked twice more after the row landed (the cache tiers expired in between).
    await expect
      .poll(
        async () => {
          seen.push(await readAsB());
          return (await readCosts()).d1Queries - queries;
        },
        { timeout: 20_000, interval: 100 },
      )
      .toBeGreaterThanOrEqual(2);
    expect(seen.every((likes) => likes === 2)).toBe(true);

    // A row whose counts were taken after B's like had time to reach the head holds it: it replaces the pinned value.
    const reach = ownWriteReachMs(config(env));
    await storeCounts(new Map([[key, 3]]), 2 ** 40 + 1, Date.now(), bAnswered + reach + 1);
    await expect.poll(readAsB, { timeout: 20_000, interval: 100 }).toBe(3);
  });

  it("reads D1 in a session that starts from the newest bookmark this isolate has seen, and carries the newer one on", async () => {
    const key = `post:${freshId()}`;
    const [db] = byCountDatabase(env, [key], (item) => item).keys();
    expect((await json(await countOne(key))).counts.likes).toBe(0);
    const first = readBookmark(db!);
    // The local runtime answers every query with its database's current bookmark.
    expect(first).toEqual(expect.any(String));
    await storeCounts(new Map([[key, 6]]));
    // Once the cache tiers expire, the next read sees the row, and a bookmark past the write.
    await expect.poll(async () => (await json(await countOne(key))).counts.likes, { timeout: 20_000, interval: 100 }).toBe(6);
    expect(readBookmark(db!)! > first!).toBe(true);
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

describe("degraded reads: the regional store fails", () => {
  it("serves the last known value with X-Stale-Data", async () => {
    const key = `post:${freshId()}`;
    await storeCounts(new Map([[key, 3]]));
    expect((await json(await countOne(key))).counts.likes).toBe(3);
    await withStoreFailing(async () => {
      const res = await vi.waitFor(
        async () => {
          const answer = await countOne(key);
          expect(answer.headers.get("x-stale-data")).toBe("true");
          return answer;
        },
        { timeout: 10_000, interval: 100 },
      );
      expect(res.status).toBe(200);
      expect((await json(res)).counts.likes).toBe(3);
      const batch = await call("POST", "/v1/counts", { body: { items: items([key]) } });
      expect(batch.headers.get("x-stale-data")).toBe("true");
      expect((await json(batch)).counts[key].likes).toBe(3);
    });
  });

  it("serves the location's last-known copy when D1 and the item's object fail together", async () => {
    const key = `post:${freshId()}`;
    // Another isolate of this location read the item long ago: its entry is no longer fresh, but the cache keeps it.
    const longAgo = Date.now() - 3_600_000;
    await edgePut(key, { counts: { ...zeroCounts(), likes: 7 }, asOf: longAgo }, 1_000, longAgo, config(env).LAST_KNOWN_CACHE_SECONDS);
    await runInDurableObject(itemStub(key), (instance) => {
      failNext(instance, "read", 100);
    });
    await withStoreFailing(async () => {
      const single = await countOne(key);
      expect(single.status).toBe(200);
      expect(single.headers.get("x-stale-data")).toBe("true");
      expect((await json(single)).counts.likes).toBe(7);
      const batch = await call("POST", "/v1/counts", { body: { items: items([key]) } });
      expect(batch.status).toBe(200);
      expect(batch.headers.get("x-stale-data")).toBe("true");
      expect((await json(batch)).counts[key].likes).toBe(7);
    });
  });

  it("answers 503 with Retry-After when nothing is known and the item's object fails too", async () => {
    const key = `post:${freshId()}`;
    await runInDurableObject(itemStub(key), (instance) => {
      failNext(instance, "read", 100);
    });
    await withStoreFailing(async () => {
      const res = await countOne(key);
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBeTruthy();
      expect((await json(res)).error).toBe("unavailable");
    });
  });

  it("marks unknown items of a batch null and the answer partial; 503 when none can be read", async () => {
    const [known, unknown] = [`post:${freshId()}`, `post:${freshId()}`];
    await storeCounts(new Map([[known, 2]]));
    expect((await countOne(known)).status).toBe(200);
    await withStoreFailing(async () => {
      const res = await call("POST", "/v1/counts", { body: { items: items([known, unknown]) } });
      expect(res.status).toBe(200);
      const body = await json(res);
      expect(body.partial).toBe(true);
      expect(body.counts[unknown]).toBeNull();
      expect(body.counts[known].likes).toBe(2);
      const none = await call("POST", "/v1/counts", { body: { items: items([unknown]) } });
      expect(none.status).toBe(503);
      expect(none.headers.get("retry-after")).toBeTruthy();
    });
  });
});
