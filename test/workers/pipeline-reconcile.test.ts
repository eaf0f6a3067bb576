import { config } from "../../shared/config";
import { createScheduledController, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import worker from "../../workers/index";
import { compare, reconcile } from "../../workers/pipeline/reconcile";
import { readPass } from "../../workers/stores/passes";
import { passPlan, startPass } from "../../workers/pipeline/pass-tick";
import { queueRandomSample } from "../../workers/pipeline/reconcile-follow-ups";
import { DRAW_RANGE, indexDraw } from "../../shared/item-index";
import { itemsIndexedBelow } from "../../workers/stores/index-walk";
import { Alternator } from "../../workers/stores/alternator";
import { countDatabaseFor } from "../../workers/stores/count-databases";
import { splitItem } from "../../workers/stores/item-key";
import { emitterSends } from "./fault-points";
import { freshId, like, newUser } from "./helpers";
import { central, d1Counts, itemStub, settled } from "./pipeline-helpers";

const WAIT = { timeout: 20_000, interval: 100 };

/** Items in the item index, counted whole. */
const indexed = () => itemsIndexedBelow(env, DRAW_RANGE, "test");

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

const raw = () => new Alternator({ endpoint: config(env).ALTERNATOR_ENDPOINT, region: "us-east-1", accessKeyId: "t", secretAccessKey: "t", timeoutMs: 5_000 });

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

/** What a cron run's summary says when some item's counts were stored within its window. */
const AFTER_A_WRITE = { itemsRecent: 1 };

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
      emitterSends(instance.emitter).drops = 1_000;
    });
    await like((await newUser()).token, item.split(":")[1]!);
    await applied(item, 2);
    await reconcileOnce();
    expect(await lastRun()).toMatchObject({ items_repaired: 0, d1_drift: 0, central_drift: 0, items_lagging: 1, max_difference: 0 });
    expect((await d1Counts(item))?.counts.likes).toBe(1);
    await runInDurableObject(itemStub(item), (instance) => {
      emitterSends(instance.emitter).drops = 0;
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

  describe("over every item ever counted, through a pass over the index", () => {
    /** A whole pass over the index, unpaced, through the queue's consumers. */
    async function fullPass(): Promise<void> {
      // The cron runs above started their own pass, paced over RECONCILE_FULL_PASS_HOURS; one pass a kind
      // runs at a time, so it is ended here to make way for an unpaced one.
      await env.DB.prepare("UPDATE passes SET finished_at = ? WHERE kind = 'reconcile' AND finished_at IS NULL").bind(Date.now()).run();
      const pass = await startPass(env, passPlan(env, "reconcile"));
      if (!pass) throw new Error("a pass of this kind is running already");
      await vi.waitFor(async () => expect((await readPass(env, pass.id))?.finished_at).not.toBeNull(), { timeout: 60_000, interval: 200 });
    }

    it("repairs a drifted item last changed days ago, which no recent-items window reaches", async () => {
      const item = await likedItem(2);
      await corrupt(item, 9, 2);
      const summary = await reconcile(env, Date.now() + 3 * 86_400_000);
      expect(summary.itemsChecked).toBe(0);
      await fullPass();
      await converged(item);
      expect((await d1Counts(item))?.counts.likes).toBe(2);
    }, 90_000);

    it("finds an item whose D1 row was deleted and writes the row again", async () => {
      const item = await likedItem(3);
      const [type, id] = splitItem(item);
      await countDatabaseFor(env, item).prepare("DELETE FROM item_counts WHERE item_type = ? AND item_id = ?").bind(type, id).run();
      expect(await d1Counts(item)).toBeNull();
      await fullPass();
      await converged(item);
      expect((await d1Counts(item))?.counts.likes).toBe(3);
    }, 90_000);
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
      // This run checks one item, `found`: the only one changed within its window, days later.
      for (const [item, at] of [[found, DAYS_LATER], [neighbour, 0]] as const) {
        const [type, id] = splitItem(item);
        await countDatabaseFor(env, item).prepare("UPDATE item_counts SET updated_at = ? WHERE item_type = ? AND item_id = ?").bind(at, type, id).run();
      }
      const summary = await reconcile(env, DAYS_LATER);
      expect(summary).toMatchObject({ itemsChecked: 1, itemsRepaired: 1 });
      // The neighbour is repaired by the drift slice the run queued, through the queue's consumer alone.
      await converged(neighbour);
      await converged(found);
      expect(await likesIn(neighbour)).toEqual([likes.get(neighbour), likes.get(neighbour)]);
      expect(await likesIn(found)).toEqual([likes.get(found), likes.get(found)]);
    }, 60_000);

    it("rechecks the drifted item itself: a repair whose snapshot was lost on its way is made again by the recheck the run queued", async () => {
      const item = await likedItem(2);
      await raw().call("DeleteItem", { TableName: "plaudit_counters", Key: { item: { S: item } } });
      await runInDurableObject(itemStub(item), (instance) => {
        // The run's repair snapshot is lost, and the object would send it again only minutes later (its
        // resend, capped at 5 minutes): within this test's wait only the queued recheck can repair again.
        emitterSends(instance.emitter).drops = 1;
        instance.emitter.resendAfterMs = 600_000;
      });
      const summary = await reconcile(env);
      expect(summary.centralDrift).toBeGreaterThanOrEqual(1);
      // The run asked for a fresh snapshot, and it was lost.
      await expect.poll(() => runInDurableObject(itemStub(item), (instance) => emitterSends(instance.emitter).drops), WAIT).toBe(0);
      await converged(item);
      expect(await likesIn(item)).toEqual([2, 2]);
    }, 60_000);

    it("hands the random sample to the queue's consumers in slices of 100, which repair what they find", async () => {
      const item = await likedItem(4);
      await corrupt(item, 1, 1);
      // Every slice starts just before the item: the sample finds it whatever else the index holds.
      const slices = await queueRandomSample({ ...env, RECONCILE_SAMPLE_ITEMS: "250" } as Env, AFTER_A_WRITE, () => (indexDraw(item) - 1) / 2 ** 32);
      expect(slices).toBe(Math.ceil(Math.min(250, await indexed()) / 100));
      await converged(item);
      expect(await likesIn(item)).toEqual([4, 4]);
    }, 60_000);

    it("asks no more checks than the index holds items, however large the sample set", async () => {
      await likedItem(1);
      const held = await indexed();
      expect(held).toBeGreaterThan(0);
      expect(held).toBeLessThan(10_000);
      // The default sample is 10,000 (100 slices); a small index is sampled once over, in slices of 100.
      expect(await queueRandomSample({ ...env, RECONCILE_SAMPLE_ITEMS: "10000" } as Env, AFTER_A_WRITE)).toBe(Math.ceil(held / 100));
      expect(await queueRandomSample({ ...env, RECONCILE_SAMPLE_ITEMS: "0" } as Env, AFTER_A_WRITE)).toBe(0);
    }, 60_000);

    it("queues a sample after a run that found counts stored within its window, and none after one that found none", async () => {
      await likedItem(1);
      const sampleOf100 = { ...env, RECONCILE_SAMPLE_ITEMS: "100" } as Env;
      const busy = await reconcile(env);
      expect(busy.itemsRecent).toBeGreaterThan(0);
      expect(await queueRandomSample(sampleOf100, busy)).toBe(1);
      // Set to check no recent item, a run still looks for one: the sample does not stop with the checks.
      const checksOff = await reconcile({ ...env, RECONCILE_RECENT_ITEMS: "0" } as Env);
      expect(checksOff.itemsChecked).toBe(0);
      expect(checksOff.itemsRecent).toBe(1);
      expect(await queueRandomSample(sampleOf100, checksOff)).toBe(1);
      // A run an hour on, with nothing stored since: an idle system, whose last samples saw the store as it is.
      const idle = await reconcile(env, Date.now() + 3_600_000);
      expect(idle.itemsRecent).toBe(0);
      expect(idle.itemsChecked).toBe(0);
      expect(await queueRandomSample(sampleOf100, idle)).toBe(0);
      // That run's record starts an hour ahead: it goes, so no later reader of the runs meets it.
      await env.DB.prepare("DELETE FROM reconciliation_runs WHERE started_at > ?").bind(Date.now()).run();
    }, 60_000);
  });
});
