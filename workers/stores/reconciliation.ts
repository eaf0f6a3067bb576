import { d1 } from "./d1";

const CALLER = "reconcile";

/** What a reconciliation run found, as `reconciliation_runs` keeps it. */
export type RunCounts = {
  itemsChecked: number;
  itemsRepaired: number;
  itemsLagging: number;
  d1Drift: number;
  centralDrift: number;
  maxDifference: number;
};

type RunRecord = RunCounts & { startedAt: number; finishedAt: number };

export async function recordRun(env: Env, run: RunRecord): Promise<void> {
  await d1(env, env.DB, CALLER).run(
    env.DB.prepare(
      `INSERT INTO reconciliation_runs
         (started_at, finished_at, items_checked, items_repaired, items_lagging, d1_drift, central_drift, max_difference)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).bind(run.startedAt, run.finishedAt, run.itemsChecked, run.itemsRepaired, run.itemsLagging, run.d1Drift, run.centralDrift, run.maxDifference),
  );
}
