import { abortAllDurableObjects } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { config } from "../../shared/config";
import { indexDraw } from "../../shared/item-index";
import type { PassKind } from "../../shared/passes";
import { countDatabaseFor, countDatabases, indexDatabaseFor } from "../../workers/stores/count-databases";
import { Alternator } from "../../workers/stores/alternator";
import { splitItem } from "../../workers/stores/item-key";
import { rangesOf, readPass, type Pass, type RangeRow } from "../../workers/stores/passes";
import { resumeStalled, startPass } from "../../workers/pipeline/pass-tick";
import { freshId, like, newUser } from "./helpers";
import { central, d1Counts, itemStub, settled, settledDurably } from "./pipeline-helpers";

/**
 * How many items the passes walk: TEST_PASS_ITEMS where a project sets it
 * (`npm run test:scale`, vitest.scale.config.ts: 20,000), else few, so that
 * `npm test` stays short: every item's check calls its object, and each
 * object's first call opens its own SQLite file.
 */
const ITEMS = Number(env.TEST_PASS_ITEMS ?? 200);
/** Items liked for real and then drifted: two of each kind of drift (injectDrift). */
const DRIFTED = 8;
/** Bounds that grow with the items: a pass's wait for its end, and a whole test. */
const PASS_MS = 120_000 + 40 * ITEMS;
const TEST_MS = 180_000 + 3 * PASS_MS;
/** A range still for this long has lost its step (the cron's lease is 10 minutes; shorter here, so a test resumes soon). */
const LEASE_MS = 15_000;

const raw = () => new Alternator({ endpoint: config(env).ALTERNATOR_ENDPOINT, region: "us-east-1", accessKeyId: "t", secretAccessKey: "t", timeoutMs: 5_000 });

/** Items in the index, 1,000 rows a statement; those never counted have no rows elsewhere (their objects read 0 at sequence 0). */
async function seedIndex(items: readonly string[]): Promise<void> {
  const groups = Map.groupBy(items, (item) => indexDatabaseFor(env, item));
  for (const [db, group] of groups) {
    const statements = [];
    for (let i = 0; i < group.length; i += 1_000) {
      const rows = group.slice(i, i + 1_000).map((item) => [indexDraw(item), item]);
      statements.push(db.prepare("INSERT OR IGNORE INTO item_index (draw, item) SELECT value ->> 0, value ->> 1 FROM json_each(?)").bind(JSON.stringify(rows)));
    }
    await db.batch(statements);
  }
}

/** Items liked once each, settled in both stores (and so in the index). */
async function likedItems(n: number): Promise<string[]> {
  const items = Array.from({ length: n }, () => `post:${freshId()}`);
  for (const item of items) expect((await like((await newUser()).token, splitItem(item)[1])).status).toBe(200);
  for (const item of items) await settled(item, 30_000);
  return items;
}

/** Drift in both stores: rows deleted and rows altered, in D1 for half the items and in the central store for the other half. */
async function injectDrift(items: readonly string[]): Promise<void> {
  const store = await central();
  const db = raw();
  for (const [i, item] of items.entries()) {
    const [type, id] = splitItem(item);
    const d1 = countDatabaseFor(env, item);
    if (i % 4 === 0) await d1.prepare("DELETE FROM item_counts WHERE item_type = ? AND item_id = ?").bind(type, id).run();
    if (i % 4 === 1) await d1.prepare("UPDATE item_counts SET likes = likes + 7 WHERE item_type = ? AND item_id = ?").bind(type, id).run();
    if (i % 4 === 2) await db.call("DeleteItem", { TableName: store.counters, Key: { item: { S: item } } });
    if (i % 4 === 3) {
      await db.call("UpdateItem", {
        TableName: store.counters,
        Key: { item: { S: item } },
        UpdateExpression: "SET likes = :likes",
        ExpressionAttributeValues: { ":likes": { N: "99" } },
      });
    }
  }
}

/** Every drifted item is off in a store: what the pass under test must find. */
async function expectDrifted(items: readonly string[]): Promise<void> {
  const store = await central();
  for (const item of items) {
    const { counts } = await itemStub(item).emissionState();
    expect([item, (await d1Counts(item))?.counts, (await store.readCounts(item))?.counts]).not.toEqual([item, counts, counts]);
  }
}

const INDEXES = { reconcile: ["item_index"], rebuild_d1: ["item_index"], rebuild_central: ["item_index", "user_index"] } as const;

/** Rows of the indexes a pass walks in one database with a draw in [lo, hi): what a range must visit (in all databases without bounds). */
async function indexRowsIn(kind: PassKind, db?: number, lo = 0, hi = 2 ** 32): Promise<number> {
  let n = 0;
  for (const database of db === undefined ? countDatabases(env) : [countDatabases(env)[db]!]) {
    for (const index of INDEXES[kind]) {
      n += (await database.prepare(`SELECT COUNT(*) AS n FROM ${index} WHERE draw >= ? AND draw < ?`).bind(lo, hi).first<{ n: number }>())!.n;
    }
  }
  return n;
}

/**
 * Waits for `done`, resuming the pass's stalled ranges as the cron would, at
 * most once a lease (a step resent is given that long to commit before it is
 * sent again): a step whose message was lost, or whose delayed retry has not
 * come back, is sent again at once.
 */
async function resumingUntil(pass: Pass, done: () => Promise<void>): Promise<void> {
  let resumedAt = Date.now();
  await vi.waitFor(
    async () => {
      if (Date.now() - resumedAt >= LEASE_MS) {
        resumedAt = Date.now();
        await resumeStalled(env, pass, resumedAt, LEASE_MS);
      }
      await done();
    },
    { timeout: PASS_MS, interval: 500 },
  );
}

/**
 * Runs a pass of 16 ranges, 4 at once, PASS_STEP_ITEMS a step, over the
 * queue's real consumer; once a quarter of the items are visited, every
 * Durable Object is aborted (abortAllDurableObjects: the steps in flight lose
 * their object calls mid-step, fail, commit nothing, and are redelivered by
 * the queue), and a range whose messages were lost is resent by the watchdog.
 * Answers the pass's ranges once it finished.
 */
async function runKilledPass(kind: PassKind): Promise<RangeRow[]> {
  const pass = await startPass(env, { kind, ranges: 16, concurrency: 4, stepItems: config(env).PASS_STEP_ITEMS, itemsPerSecond: 0 });
  if (!pass) throw new Error("a pass of this kind is running already");
  const visited = async () => (await rangesOf(env, pass.id)).reduce((sum, row) => sum + row.visited, 0);
  await resumingUntil(pass, async () => expect(await visited()).toBeGreaterThanOrEqual(ITEMS / 4));
  await abortAllDurableObjects();
  expect(await visited()).toBeLessThan(ITEMS);
  await resumingUntil(pass, async () => expect((await readPass(env, pass.id))?.finished_at).not.toBeNull());
  return await rangesOf(env, pass.id);
}

/** Every range visited each index row within its bounds exactly once (a step's visits count only when it commits), and the ranges cover every row. */
async function expectEveryItemOnce(kind: PassKind, ranges: readonly RangeRow[]): Promise<void> {
  expect(ranges).toHaveLength(16);
  for (const row of ranges) expect([row.range_no, row.done, row.visited]).toEqual([row.range_no, 1, await indexRowsIn(kind, row.db, row.lo, row.hi)]);
  expect(ranges.reduce((sum, row) => sum + row.visited, 0)).toBe(await indexRowsIn(kind));
}

async function expectConverged(items: readonly string[]): Promise<void> {
  const store = await central();
  for (const item of items) {
    await vi.waitFor(
      async () => {
        const { counts } = await itemStub(item).emissionState();
        expect([item, (await d1Counts(item))?.counts, (await store.readCounts(item))?.counts]).toEqual([item, counts, counts]);
      },
      { timeout: 120_000, interval: 500 },
    );
  }
}

const changed = (ranges: readonly RangeRow[]) => ranges.reduce((sum, row) => sum + row.changed, 0);

let seeded: Promise<string[]> | null = null;

/** The items the tests walk, seeded once per file (storage is shared by its tests): answers the ones liked for real. */
function seedOnce(): Promise<string[]> {
  seeded ??= (async () => {
    const liked = await likedItems(DRIFTED);
    const base = BigInt(freshId()) * 1_000n;
    await seedIndex(Array.from({ length: ITEMS - DRIFTED }, (_, i) => `post:${base + BigInt(i)}`));
    return liked;
  })();
  return seeded;
}

describe(`passes over every item, fanned out in ranges (${ITEMS} items, 16 ranges, 4 at once)`, () => {
  it("rebuild passes of D1 and of the central store, each killed midway and resumed, visit each key once and repair every drift", async () => {
    const drifted = await seedOnce();
    await injectDrift(drifted);
    await expectDrifted(drifted);
    const d1Ranges = await runKilledPass("rebuild_d1");
    await expectEveryItemOnce("rebuild_d1", d1Ranges);
    const centralRanges = await runKilledPass("rebuild_central");
    await expectEveryItemOnce("rebuild_central", centralRanges);
    // Rows deleted are written again; rows altered at their sequence are repaired by a fresh snapshot. Only
    // the liked items can change; one repaired in a step the kill cut short may be found whole by its
    // redelivery, so the tallies are bounded, and the stores' agreement below is the exact check.
    for (const ranges of [d1Ranges, centralRanges]) expect(changed(ranges)).toBeLessThanOrEqual(DRIFTED);
    expect(changed([...d1Ranges, ...centralRanges])).toBeGreaterThan(0);
    await expectConverged(drifted);
  }, TEST_MS);

  it("a reconciliation pass, killed midway and resumed, checks each item once and repairs every drift", async () => {
    // Last in the file: the rechecks and drift slices its finds queue may still run after it.
    const drifted = await seedOnce();
    // Stored, not only acknowledged: an item the kill restarts would otherwise resend its last snapshot, which writes
    // a deleted row back before the pass gets to it, and the pass would rightly find nothing to repair there.
    for (const item of drifted) await settledDurably(item);
    await injectDrift(drifted);
    await expectDrifted(drifted);
    const seqs = await Promise.all(drifted.map(async (item) => (await itemStub(item).emissionState()).seq));
    const ranges = await runKilledPass("reconcile");
    await expectEveryItemOnce("reconcile", ranges);
    // Only the liked items can drift (the others were never counted: 0 everywhere), each counted by the one step that committed it.
    expect(changed(ranges)).toBeLessThanOrEqual(DRIFTED);
    // Each repair is a fresh snapshot asked of the object (by the pass, or by the recheck or drift slice a find queued).
    for (const [i, item] of drifted.entries()) expect([item, (await itemStub(item).emissionState()).seq > seqs[i]!]).toEqual([item, true]);
    await expectConverged(drifted);
  }, TEST_MS);
});
