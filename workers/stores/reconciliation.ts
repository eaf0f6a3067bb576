import { d1 } from "./d1";

const CALLER = "reconcile";

/** Where the reconciliation sweep's walk over the item index stands (one row, in `DB`). */
export type SweepCursor = { cursor: number; cursor_item: string; pass_started_at: number; last_pass_started_at: number | null };

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

/** The stored cursor; null before the first sweep. */
export async function readSweepCursor(env: Env): Promise<SweepCursor | null> {
  return await d1(env, env.DB, CALLER).first<SweepCursor>(
    env.DB.prepare("SELECT cursor, cursor_item, pass_started_at, last_pass_started_at FROM reconciliation_sweep WHERE id = 1"),
  );
}

export async function writeSweepCursor(env: Env, next: SweepCursor): Promise<void> {
  await d1(env, env.DB, CALLER).run(
    env.DB.prepare(
      `INSERT INTO reconciliation_sweep (id, cursor, cursor_item, pass_started_at, last_pass_started_at) VALUES (1, ?1, ?2, ?3, ?4)
       ON CONFLICT (id) DO UPDATE SET cursor = ?1, cursor_item = ?2, pass_started_at = ?3, last_pass_started_at = ?4`,
    ).bind(next.cursor, next.cursor_item, next.pass_started_at, next.last_pass_started_at),
  );
}

export async function recordRun(env: Env, run: RunRecord): Promise<void> {
  await d1(env, env.DB, CALLER).run(
    env.DB.prepare(
      `INSERT INTO reconciliation_runs
         (started_at, finished_at, items_checked, items_repaired, items_lagging, d1_drift, central_drift, max_difference)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).bind(run.startedAt, run.finishedAt, run.itemsChecked, run.itemsRepaired, run.itemsLagging, run.d1Drift, run.centralDrift, run.maxDifference),
  );
}
