import { scheduleFlush } from "../metrics/flush";
import { metrics } from "../metrics/recorder";
import { log } from "../shared/log";
import { drainIntents } from "./likes/intents";
import { tickPasses } from "./pipeline/pass-tick";
import { reconcile } from "./pipeline/reconcile";
import { queueRandomSample } from "./pipeline/reconcile-follow-ups";

/**
 * Cron (every 5 minutes): applies the toggles kept while users' objects were
 * unreachable that their own queued drains left (the backstop; docs/api.md),
 * then reconciles the recently changed items with their objects, keeps the
 * pass over every item going (./pipeline/pass-tick.ts) and hands the queue's
 * consumers this run's random sample (none when the run found nothing
 * stored within its window). Cron is at least once; all four are
 * idempotent (one pass of a kind runs at a time, so a tick run twice starts one).
 */
export async function scheduled(_controller: ScheduledController, env: Env, ctx?: ExecutionContext): Promise<void> {
  await drainIntents(env).catch((error: unknown) => log("error", "intents_drain_failed", { error: String(error) }));
  const summary = await reconcile(env);
  await tickPasses(env).catch((error: unknown) => log("error", "pass_tick_failed", { error: String(error) }));
  await queueRandomSample(env, summary).catch((error: unknown) => log("error", "reconcile_sample_failed", { error: String(error) }));
  metrics.gauge("reconciliation_drift_ratio", {}, summary.itemsChecked === 0 ? 0 : summary.itemsRepaired / summary.itemsChecked);
  metrics.gauge("reconciliation_relative_drift", {}, summary.maxRelativeDrift);
  metrics.count("reconciliation_items_checked_total", {}, summary.itemsChecked);
  if (ctx) scheduleFlush(env, ctx);
}
