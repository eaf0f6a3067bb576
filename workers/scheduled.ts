import { reconcile } from "./pipeline/reconcile";

/** Cron (every 5 minutes): reconciles the stores with the item objects. Cron is at least once; reconcile is idempotent. */
export async function scheduled(_controller: ScheduledController, env: Env): Promise<void> {
  await reconcile(env);
}
