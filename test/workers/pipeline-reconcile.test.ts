import { config } from "../../shared/config";
import { createScheduledController, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import worker from "../../workers/index";
import { Alternator } from "../../workers/pipeline/alternator";
import { countDatabaseFor } from "../../workers/lib/count-databases";
import { splitItem } from "../../workers/pipeline/d1-store";
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

async function reconcileOnce(): Promise<void> {
  await worker.scheduled(createScheduledController({ cron: "*/5 * * * *", scheduledTime: new Date() }), env);
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
});
