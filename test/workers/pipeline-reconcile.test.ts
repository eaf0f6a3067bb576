import { config } from "../../shared/config";
import { createScheduledController, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import worker from "../../workers/index";
import { compare, reconcile } from "../../workers/pipeline/reconcile";
import { nextSweepShare } from "../../workers/pipeline/sweep";
import { queueRandomSample } from "../../workers/pipeline/reconcile-follow-up";
import { indexDraw } from "../../shared/item-index";
import { Alternator } from "../../workers/stores/alternator";
import { countDatabaseFor } from "../../workers/stores/count-databases";
import { splitItem } from "../../workers/stores/item-key";
import { freshId, like, newUser } from "./helpers";
import { central, d1Counts, itemStub, settled } from "./pipeline-helpers";

const WAIT = { timeout: 20_000, interval: 100 };

/** Waits for the item's object to have applied `likes` likes: a like is answered before the item side has it. */
async function applied(item: string, likes: number): Promise<void> {
  await vi.waitFor(async () => expect((await itemStub(item).read()).counts.likes).toBe(likes), WAIT);
}

/** An item liked by `likes` users, with its counts settled in both stores. */
async function likedItem(likes: number): Promise<string> {
  const id = freshId();
  for (let i = 0; i < likes; i++) await like((await newUser()).token, id);
  await applied(`post:${id}`, likes);
  await settled(`post:${id}`);
  return `post:${id}`;
}

/** Overwrites the item's likes in both stores by hand, as an operator's mistake or a bug would. */
async function corrupt(item: string, d1Likes: number, centralLikes: number): Promise<void> {
  const [type, id] = splitItem(item);
  await countDatabaseFor(env, item).prepare("UPDATE item_counts SET likes = ? WHERE item_type = ? AND item_id = ?")
    .bind(d1Likes, type, id)
    .run();
  const db = new Alternator({ endpoint: config(env).ALTERNATOR_ENDPOINT, region: "us-east-1", accessKeyId: "t", secretAccessKey: "t", timeoutMs: 5_000 });
  await db.call("UpdateItem", {
    TableName: "plaudit_counters",
    Key: { item: { S: item } },
    UpdateExpression: "SET likes = :likes",
    ExpressionAttributeValues: { ":likes": { N: String(centralLikes) } },
  });
}

/** One cron run, without the random sample (its own test below): these tests count what one run repaired. */
async function reconcileOnce(): Promise<void> {
  await worker.scheduled(createScheduledController({ cron: "*/5 * * * *", scheduledTime: new Date() }), { ...env, RECONCILE_SAMPLE_ITEMS: "0" } as Env);
}

async function lastRun(): Promise<Record<string, number>> {
  return (await env.DB.prepare("SELECT * FROM reconciliation_runs ORDER BY id DESC LIMIT 1").first())!;
}

async function converged(item: string): Promise<void> {
  const store = await central();
  await vi.waitFor(async () => {
    const { counts } = await itemStub(item).emissionState();
    expect((await d1Counts(item))?.counts).toEqual(counts);
    expect((await store.readCounts(item))?.counts).toEqual(counts);
  }, WAIT);
}

describe("reconciliation", () => {
  it("repairs a corrupted D1 count and central count in one run, and records the drift", async () => {
    const item = await likedItem(3);
    await corrupt(item, 10, 1);
    await reconcileOnce();
    expect(await lastRun()).toMatchObject({ items_repaired: 1, d1_drift: 1, central_drift: 1, items_lagging: 0, max_difference: 7 });
    await converged(item);
    expect((await d1Counts(item))?.counts.likes).toBe(3);
  }, 60_000);

  it("reports a store that is behind its object as lag, and repairs nothing", async () => {
    const item = await likedItem(1);
    await runInDurableObject(itemStub(item), (instance) => {
      instance.emitter.faults.dropSends = 1_000;
    });
    await like((await newUser()).token, item.split(":")[1]!);
    await applied(item, 2);
    await reconcileOnce();
    expect(await lastRun()).toMatchObject({ items_repaired: 0, d1_drift: 0, central_drift: 0, items_lagging: 1, max_difference: 0 });
    expect((await d1Counts(item))?.counts.likes).toBe(1);
    await runInDurableObject(itemStub(item), (instance) => {
      instance.emitter.faults.dropSends = 0;
      instance.emitter.resendAfterMs = 200;
    });
    await converged(item);
  }, 60_000);

  it("takes views an object counted and has yet to put under a new sequence for lag, not drift", () => {
    const object = { seq: 4, ackedSeq: 4, counts: { likes: 2, views: 5, shares: 0, saves: 0 } };
    const stored = { seq: 4, counts: { likes: 2, views: 3, shares: 0, saves: 0 } };
    expect(compare({ ...object, unrecorded: true }, stored)).toEqual({ kind: "lag" });
    expect(compare(object, stored)).toMatchObject({ kind: "drift", difference: 2 });
  });

  it("does no harm when two runs repair at once, and a later run finds nothing left to repair", async () => {
    const item = await likedItem(2);
    await corrupt(item, 0, 5);
    await Promise.all([reconcileOnce(), reconcileOnce()]);
    await converged(item);
    await settled(item);
    await reconcileOnce();
    expect(await lastRun()).toMatchObject({ items_repaired: 0, d1_drift: 0, central_drift: 0, items_lagging: 0 });
    expect((await d1Counts(item))?.counts.likes).toBe(2);
    expect((await (await central()).readCounts(item))?.counts.likes).toBe(2);
  }, 60_000);

  describe("over every item ever counted, through the index", () => {
    const DAYS_LATER = Date.now() + 3 * 86_400_000;

    it("repairs a drifted item last changed days ago, which no recent-items window reaches", async () => {
      const item = await likedItem(2);
      await corrupt(item, 9, 2);
      // The clock, three days on: the item is long out of the recent window; only the walk over the index finds it.
      const summary = await reconcile(env, DAYS_LATER);
      expect(summary.itemsRepaired).toBeGreaterThanOrEqual(1);
      expect(summary.maxRelativeDrift).toBeGreaterThanOrEqual(3.5);
      await converged(item);
      expect((await d1Counts(item))?.counts.likes).toBe(2);
    }, 60_000);

    it("finds an item whose D1 row was deleted and writes the row again", async () => {
      const item = await likedItem(3);
      const [type, id] = splitItem(item);
      await countDatabaseFor(env, item).prepare("DELETE FROM item_counts WHERE item_type = ? AND item_id = ?").bind(type, id).run();
      expect(await d1Counts(item)).toBeNull();
      const summary = await reconcile(env, DAYS_LATER);
      expect(summary.d1Drift).toBeGreaterThanOrEqual(1);
      await converged(item);
      expect((await d1Counts(item))?.counts.likes).toBe(3);
    }, 60_000);

    it("walks the index a share at a time: one pass reaches every item once, then the oldest check is the pass's start", async () => {
      const items = [await likedItem(1), await likedItem(1)];
      const start = DAYS_LATER + 1_000;
      // Finish whatever pass earlier runs left open, so this one starts at the beginning.
      while ((await nextSweepShare(env, 1_000, start)).items.length === 1_000);
      const walked: string[] = [];
      for (let run = 1; run <= 10_000; run++) {
        const { items: share } = await nextSweepShare(env, 1, start + run);
        if (share.length === 0) break;
        walked.push(...share);
      }
      expect(walked).toEqual(expect.arrayContaining(items));
      expect(new Set(walked).size).toBe(walked.length);
      // The pass ended: every item was checked since it started.
      expect((await nextSweepShare(env, 1, start + 20_000)).oldestCheckAt).toBe(start);
    }, 60_000);
  });

  describe("what drift sets off, with no call from outside", () => {
    const DAYS_LATER = Date.now() + 3 * 86_400_000;
    const likesIn = async (item: string) => [(await d1Counts(item))?.counts.likes, (await (await central()).readCounts(item))?.counts.likes];

    it("queues a recheck of the drifted item and a sample of the items after it in the index, which repairs drift the run itself never checked", async () => {
      const likes = new Map([
        [await likedItem(2), 2],
        [await likedItem(3), 3],
      ]);
      const [found, neighbour] = [...likes.keys()].sort((a, b) => indexDraw(a) - indexDraw(b) || (a < b ? -1 : 1)) as [string, string];
      await corrupt(found, 7, 0);
      await corrupt(neighbour, 0, 9);
      // This run checks one item, `found`: no recent items, a share of one, the walk's cursor just before it.
      await env.DB.prepare(
        `INSERT INTO reconciliation_sweep (id, cursor, cursor_item, pass_started_at, last_pass_started_at) VALUES (1, ?1, '', ?2, NULL)
         ON CONFLICT (id) DO UPDATE SET cursor = ?1, cursor_item = ''`,
      ).bind(indexDraw(found), DAYS_LATER).run();
      const summary = await reconcile(({ ...env, RECONCILE_RECENT_ITEMS: "0", RECONCILE_SWEEP_ITEMS: "1" } as Env), DAYS_LATER);
      expect(summary).toMatchObject({ itemsChecked: 1, itemsRepaired: 1 });
      // The neighbour is repaired by the drift slice the run queued, through the queue's consumer alone.
      await converged(neighbour);
      await converged(found);
      expect(await likesIn(neighbour)).toEqual([likes.get(neighbour), likes.get(neighbour)]);
      expect(await likesIn(found)).toEqual([likes.get(found), likes.get(found)]);
    }, 60_000);

    it("hands the random sample to the queue's consumers in slices of 100, which repair what they find", async () => {
      const item = await likedItem(4);
      await corrupt(item, 1, 1);
      // Every slice starts just before the item: the sample finds it whatever else the index holds.
      const slices = await queueRandomSample({ ...env, RECONCILE_SAMPLE_ITEMS: "250" } as Env, () => (indexDraw(item) - 1) / 2 ** 32);
      expect(slices).toBe(3);
      await converged(item);
      expect(await likesIn(item)).toEqual([4, 4]);
    }, 60_000);
  });
});
