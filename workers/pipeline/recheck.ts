import { scheduleFlush } from "../../metrics/flush";
import { metrics } from "../../metrics/recorder";
import type { RecheckRequest } from "../../shared/emissions";
import { log } from "../../shared/log";
import { checkItems, outcomeOf } from "./reconcile";
import type { RequestMessage } from "./requests";

/**
 * Answers the heads' recheck requests (durable-objects/lib/recheck.ts): each
 * item is checked as the cron checks it, stores against object, and a
 * drifted one repaired, with one check per item however many of its requests
 * the batch holds. A failed check is retried like any message; a request
 * dead-lettered costs nothing, since the head asks again an interval later.
 */
export async function answerRechecks(env: Env, queue: string, rechecks: readonly RequestMessage<RecheckRequest>[], ctx?: ExecutionContext): Promise<void> {
  const items = [...new Set(rechecks.map(({ request }) => request.item))];
  const failed = new Set<string>();
  (await checkItems(env, items, "recheck")).forEach((result, i) => {
    if (result.status === "fulfilled") metrics.count("reconciliation_rechecks_total", { outcome: outcomeOf(result.value) });
    else {
      failed.add(items[i]!);
      metrics.count("reconciliation_rechecks_total", { outcome: "failed" });
      log("error", "recheck_failed", { item: items[i], error: String(result.reason) });
    }
  });
  for (const { message, request } of rechecks) {
    if (failed.has(request.item)) message.retry();
    else message.ack();
  }
  const retried = rechecks.filter(({ request }) => failed.has(request.item)).length;
  metrics.count("queue_messages_total", { queue, event: "consumed" }, rechecks.length - retried);
  metrics.count("queue_messages_total", { queue, event: "retried" }, retried);
  if (ctx) scheduleFlush(env, ctx);
}
