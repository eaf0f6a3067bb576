import { scheduleFlush } from "../metrics/flush";
import { metrics } from "../metrics/recorder";
import { reconcile } from "./pipeline/reconcile";

/** Cron (every 5 minutes): reconciles the stores with the item objects. Cron is at least once; reconcile is idempotent. */
export async function scheduled(_controller: ScheduledController, env: Env, ctx?: ExecutionContext): Promise<void> {
  const summary = await reconcile(env);
  metrics.gauge("reconciliation_drift_ratio", {}, summary.itemsChecked === 0 ? 0 : summary.itemsRepaired / summary.itemsChecked);
  if (ctx) scheduleFlush(env, ctx);
}
