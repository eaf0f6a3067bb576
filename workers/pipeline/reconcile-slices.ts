import { scheduleFlush } from "../../metrics/flush";
import { metrics } from "../../metrics/recorder";
import { EMISSION_VERSION, type RecheckRequest, type ReconcileSlice } from "../../shared/emissions";
import { log } from "../../shared/log";
import { indexPage } from "../stores/index-walk";
import { checkItems, outcomeOf } from "./reconcile";
import { followUpDrift, sendFollowUps } from "./reconcile-follow-ups";
import type { RequestMessage } from "./requests";

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
      else if (drifted.length > 0) await sendFollowUps(env, drifted.map((item): RecheckRequest => ({ v: EMISSION_VERSION, kind: "recheck", item })));
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
