import { scheduleFlush } from "../../metrics/flush";
import { metrics } from "../../metrics/recorder";
import { config } from "../../shared/config";
import { EMISSION_VERSION, MAX_SEND_BATCH, MAX_SLICE_ITEMS, type RecheckRequest, type ReconcileSlice } from "../../shared/emissions";
import { indexDraw } from "../../shared/item-index";
import { log } from "../../shared/log";
import { indexPage } from "./index-walk";
import { checkItems, outcomeOf } from "./reconcile";
import type { RequestMessage } from "./requests";

type Message = RecheckRequest | ReconcileSlice;

/** Sends reconciliation's follow-up messages on the first events queue, 100 a `sendBatch`. */
async function send(env: Env, messages: readonly Message[]): Promise<void> {
  for (let i = 0; i < messages.length; i += MAX_SEND_BATCH) {
    const chunk = messages.slice(i, i + MAX_SEND_BATCH);
    await env.EVENTS.sendBatch(chunk.map((body) => ({ body, contentType: "json" as const })));
    metrics.count("queue_messages_total", { queue: "plaudit-events", event: "sent" }, chunk.length);
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
  if (messages.length > 0) await send(env, messages);
}

/**
 * The customer's random sample: RECONCILE_SAMPLE_ITEMS items each run, as
 * slices of up to 100 from random places in the index, handed to the queue's
 * consumers (so the sample's checks run in parallel, across invocations,
 * never in the cron's own wall time).
 */
export async function queueRandomSample(env: Env, random = Math.random): Promise<number> {
  const wanted = config(env).RECONCILE_SAMPLE_ITEMS;
  const slices: ReconcileSlice[] = [];
  for (let left = wanted; left > 0; left -= MAX_SLICE_ITEMS) {
    const draw = Math.floor(random() * 2 ** 32);
    slices.push({ v: EMISSION_VERSION, kind: "reconcile_slice", reason: "sample", after: { draw, key: "" }, limit: Math.min(MAX_SLICE_ITEMS, left) });
  }
  if (slices.length > 0) await send(env, slices);
  return slices.length;
}

/**
 * The consumer's side: checks each slice's items as the cron checks them
 * (drifted ones repaired), counts them by reason and outcome, and follows up
 * the drift a sample slice found; drift found by a drift slice is repaired
 * and rechecked, but sets off no further slice, so one cause costs a bounded
 * number of checks. A slice that failed is retried like any message.
 */
export async function answerSlices(env: Env, queue: string, slices: readonly RequestMessage<ReconcileSlice>[], ctx?: ExecutionContext): Promise<void> {
  let retried = 0;
  for (const { message, request } of slices) {
    try {
      const page = await indexPage(env, "item_index", request.after, request.limit, "reconcile");
      const items = page.entries.map(({ key }) => key);
      const drifted: string[] = [];
      (await checkItems(env, items, "reconcile")).forEach((result, i) => {
        const outcome = result.status === "fulfilled" ? outcomeOf(result.value) : "failed";
        metrics.count("reconciliation_slice_items_total", { reason: request.reason, outcome });
        if (outcome === "repaired") drifted.push(items[i]!);
      });
      if (request.reason === "sample") await followUpDrift(env, drifted);
      else if (drifted.length > 0) await send(env, drifted.map((item): RecheckRequest => ({ v: EMISSION_VERSION, kind: "recheck", item })));
      if (drifted.length > 0) log("warn", "reconcile_slice_drift", { reason: request.reason, items: drifted.length });
      message.ack();
    } catch (error) {
      retried++;
      log("error", "reconcile_slice_failed", { error: String(error) });
      message.retry();
    }
  }
  metrics.count("queue_messages_total", { queue, event: "consumed" }, slices.length - retried);
  metrics.count("queue_messages_total", { queue, event: "retried" }, retried);
  if (ctx) scheduleFlush(env, ctx);
}
