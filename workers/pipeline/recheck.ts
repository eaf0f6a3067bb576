import { scheduleFlush } from "../../metrics/flush";
import { metrics } from "../../metrics/recorder";
import { RecheckRequest } from "../../shared/emissions";
import { log } from "../../shared/log";
import { checkItems, outcomeOf } from "./reconcile";

export type RecheckMessage = { message: Message<unknown>; item: string };

/**
 * Splits an events-queue batch into the heads' recheck requests and the rest,
 * which stays one batch for the aggregator (an unknown message there is
 * retried alone and dead-lettered, as before).
 */
export function separateRechecks(batch: MessageBatch<unknown>): { rechecks: RecheckMessage[]; others: MessageBatch<unknown> } {
  const rechecks: RecheckMessage[] = [];
  const others: Message<unknown>[] = [];
  for (const message of batch.messages) {
    const request = RecheckRequest.safeParse(message.body);
    if (request.success) rechecks.push({ message, item: request.data.item });
    else others.push(message);
  }
  if (rechecks.length === 0) return { rechecks, others: batch };
  return {
    rechecks,
    others: {
      queue: batch.queue,
      metadata: batch.metadata,
      messages: others,
      ackAll: () => others.forEach((m) => m.ack()),
      retryAll: (options) => others.forEach((m) => m.retry(options)),
    },
  };
}

/**
 * Answers the heads' recheck requests (durable-objects/lib/recheck.ts): each
 * item is checked as the cron checks it, stores against object, and a
 * drifted one repaired, with one check per item however many of its requests
 * the batch holds. A failed check is retried like any message; a request
 * dead-lettered costs nothing, since the head asks again an interval later.
 */
export async function answerRechecks(env: Env, queue: string, rechecks: readonly RecheckMessage[], ctx?: ExecutionContext): Promise<void> {
  const items = [...new Set(rechecks.map(({ item }) => item))];
  const failed = new Set<string>();
  (await checkItems(env, items, "recheck")).forEach((result, i) => {
    if (result.status === "fulfilled") metrics.count("reconciliation_rechecks_total", { outcome: outcomeOf(result.value) });
    else {
      failed.add(items[i]!);
      metrics.count("reconciliation_rechecks_total", { outcome: "failed" });
      log("error", "recheck_failed", { item: items[i], error: String(result.reason) });
    }
  });
  for (const { message, item } of rechecks) {
    if (failed.has(item)) message.retry();
    else message.ack();
  }
  const retried = rechecks.filter(({ item }) => failed.has(item)).length;
  metrics.count("queue_messages_total", { queue, event: "consumed" }, rechecks.length - retried);
  metrics.count("queue_messages_total", { queue, event: "retried" }, retried);
  if (ctx) scheduleFlush(env, ctx);
}
