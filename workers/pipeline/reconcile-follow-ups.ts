import { sendToQueue } from "../../durable-objects/lib/queue-send";
import { config } from "../../shared/config";
import { EMISSION_VERSION, MAX_SEND_BATCH, MAX_SLICE_ITEMS, type RecheckRequest, type ReconcileSlice } from "../../shared/emissions";
import { eventQueueFor } from "../../shared/event-queue-for";
import { indexDraw } from "../../shared/item-index";
import { estimateIndexSize } from "../stores/index-walk";

type Message = RecheckRequest | ReconcileSlice;

/**
 * Sends reconciliation's follow-up messages, 100 a send: a recheck on its
 * item's queue (where the item's emissions travel), a slice on the queue of
 * the key it starts after.
 */
export async function sendFollowUps(env: Env, messages: readonly Message[]): Promise<void> {
  const byQueue = new Map<string, { key: string; bodies: Message[] }>();
  for (const message of messages) {
    const key = message.kind === "recheck" ? message.item : message.after.key;
    const { name } = eventQueueFor(env, key);
    const group = byQueue.get(name) ?? { key, bodies: [] };
    group.bodies.push(message);
    byQueue.set(name, group);
  }
  for (const { key, bodies } of byQueue.values()) {
    for (let i = 0; i < bodies.length; i += MAX_SEND_BATCH) await sendToQueue(env, key, bodies.slice(i, i + MAX_SEND_BATCH));
  }
}

/**
 * What finding drift sets off, with no call from outside (the drift alert
 * only tells people): a recheck of each drifted item, which confirms its
 * repair landed (or repairs it again), and a slice of the RECONCILE_DRIFT_SAMPLE
 * items after it in the index, whose order is a hash: a random sample of
 * neighbours, so drift with one cause (a lost D1 batch, a restored backup)
 * is found beyond the items this run happened to check.
 */
export async function followUpDrift(env: Env, drifted: readonly string[]): Promise<void> {
  const limit = Math.min(MAX_SLICE_ITEMS, config(env).RECONCILE_DRIFT_SAMPLE);
  const messages: Message[] = drifted.flatMap((item): Message[] => [
    { v: EMISSION_VERSION, kind: "recheck", item },
    ...(limit > 0 ? [{ v: EMISSION_VERSION, kind: "reconcile_slice", reason: "drift", after: { draw: indexDraw(item), key: item }, limit } as const] : []),
  ]);
  if (messages.length > 0) await sendFollowUps(env, messages);
}

/**
 * The customer's random sample: RECONCILE_SAMPLE_ITEMS items each run, as
 * slices of up to 100 from random places in the index, handed to the queue's
 * consumers (so the sample's checks run in parallel, across invocations,
 * never in the cron's own wall time). Never more than the index holds: over
 * a small index a larger sample would check the same items again in the
 * same run (each check an object call) and find nothing more. None after a
 * run that found no item stored within its window (`run.itemsRecent`):
 * drift comes from writes and their delivery, so the samples of the runs
 * since the last write saw the store as it is, and an idle system does no
 * work; the pass over every item covers what a sample would find later. A
 * store restored from a backup is the exception: `npm run rebuild` repairs
 * it (docs/rebuild.md).
 */
export async function queueRandomSample(env: Env, run: { itemsRecent: number }, random = Math.random): Promise<number> {
  const configured = config(env).RECONCILE_SAMPLE_ITEMS;
  if (configured <= 0 || run.itemsRecent === 0) return 0;
  const wanted = Math.min(configured, await estimateIndexSize(env, "reconcile"));
  const slices: ReconcileSlice[] = [];
  for (let left = wanted; left > 0; left -= MAX_SLICE_ITEMS) {
    const draw = Math.floor(random() * 2 ** 32);
    slices.push({ v: EMISSION_VERSION, kind: "reconcile_slice", reason: "sample", after: { draw, key: "" }, limit: Math.min(MAX_SLICE_ITEMS, left) });
  }
  if (slices.length > 0) await sendFollowUps(env, slices);
  return slices.length;
}
