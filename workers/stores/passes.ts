import { type PassKind, rangeBounds, rangeCount, type RangeBounds } from "../../shared/passes";
import { countDatabases } from "./count-databases";
import { d1 } from "./d1";

/**
 * Where a pass stands lives in D1 (`DB`, migrations/0015_passes.sql): a row
 * per pass and a row per range, so any consumer invocation can take any
 * range's next step, and a pass outlives every runner.
 */
export const PASS_CALLER = "pass";

export type Pass = {
  id: string;
  kind: PassKind;
  ranges: number;
  concurrency: number;
  step_items: number;
  items_per_second: number;
  started_at: number;
  finished_at: number | null;
};

export type RangeRow = RangeBounds & {
  pass: string;
  range_no: number;
  cursor: string | null;
  step: number;
  visited: number;
  changed: number;
  done: number;
  touched_at: number;
};

export type PassPlan = { kind: PassKind; ranges: number; concurrency: number; stepItems: number; itemsPerSecond: number };

const db = (env: Env) => d1(env, env.DB, PASS_CALLER);

/**
 * Writes a new pass and all its ranges (none started: the caller queues the
 * first `concurrency`). Answers null when a pass of its kind is running
 * already: one unfinished pass a kind is a unique index, so two overlapping
 * cron runs cannot both start one.
 */
export async function createPass(env: Env, plan: PassPlan, now: number): Promise<Pass | null> {
  const databases = countDatabases(env).length;
  const ranges = rangeCount(plan.ranges, databases);
  const pass: Pass = {
    id: `${plan.kind}:${now}`,
    kind: plan.kind,
    ranges,
    concurrency: Math.min(plan.concurrency, ranges),
    step_items: plan.stepItems,
    items_per_second: plan.itemsPerSecond,
    started_at: now,
    finished_at: null,
  };
  const insert = env.DB.prepare("INSERT INTO pass_ranges (pass, range_no, db, lo, hi, touched_at) VALUES (?, ?, ?, ?, ?, ?)");
  const written = db(env).batch([
    env.DB.prepare("INSERT INTO passes (id, kind, ranges, concurrency, step_items, items_per_second, started_at) VALUES (?, ?, ?, ?, ?, ?, ?)").bind(
      pass.id,
      pass.kind,
      pass.ranges,
      pass.concurrency,
      pass.step_items,
      pass.items_per_second,
      now,
    ),
    ...Array.from({ length: ranges }, (_, range) => {
      const { db: database, lo, hi } = rangeBounds(range, ranges, databases);
      return insert.bind(pass.id, range, database, lo, hi, now);
    }),
  ]);
  try {
    await written;
  } catch (error) {
    if (String(error).includes("UNIQUE constraint failed: passes.kind")) return null;
    throw error;
  }
  return pass;
}

export async function readPass(env: Env, id: string): Promise<Pass | null> {
  return await db(env).first<Pass>(env.DB.prepare("SELECT * FROM passes WHERE id = ?").bind(id));
}

/** The newest pass of a kind, finished or not. */
export async function latestPass(env: Env, kind: PassKind): Promise<Pass | null> {
  return await db(env).first<Pass>(env.DB.prepare("SELECT * FROM passes WHERE kind = ? ORDER BY started_at DESC LIMIT 1").bind(kind));
}

export async function unfinishedPasses(env: Env): Promise<Pass[]> {
  return await db(env).all<Pass>(env.DB.prepare("SELECT * FROM passes WHERE finished_at IS NULL"));
}

/** A range's row with its pass's settings, in one query. */
export async function readRange(env: Env, pass: string, range: number): Promise<(RangeRow & { plan: Pass }) | null> {
  const row = await db(env).first<RangeRow & Omit<Pass, "id" | "finished_at">>(
    env.DB.prepare(
      `SELECT r.*, p.kind, p.ranges, p.concurrency, p.step_items, p.items_per_second, p.started_at
       FROM pass_ranges r JOIN passes p ON p.id = r.pass WHERE r.pass = ? AND r.range_no = ?`,
    ).bind(pass, range),
  );
  if (!row) return null;
  const { kind, ranges, concurrency, step_items, items_per_second, started_at, ...rest } = row;
  return { ...rest, plan: { id: pass, kind, ranges, concurrency, step_items, items_per_second, started_at, finished_at: null } };
}

export async function rangesOf(env: Env, pass: string): Promise<RangeRow[]> {
  return await db(env).all<RangeRow>(env.DB.prepare("SELECT * FROM pass_ranges WHERE pass = ? ORDER BY range_no").bind(pass));
}

export type StepResult = { cursor: string | null; visited: number; changed: number; done: boolean };

/**
 * Commits one step: the range's new cursor and tallies, only if no other
 * delivery of the same step committed first. Answers whether this one did.
 */
export async function commitStep(env: Env, row: RangeRow, result: StepResult, now: number): Promise<boolean> {
  const [update] = await db(env).batch([
    env.DB.prepare(
      `UPDATE pass_ranges SET cursor = ?, step = step + 1, visited = visited + ?, changed = changed + ?, done = ?, touched_at = ?
       WHERE pass = ? AND range_no = ? AND step = ? AND done = 0`,
    ).bind(result.cursor, result.visited, result.changed, result.done ? 1 : 0, now, row.pass, row.range_no, row.step),
  ]);
  return (update?.meta.changes ?? 0) === 1;
}

/** Marks the pass finished once its last range is done; answers its ranges done and in all, and whether this call finished it. */
export async function finishIfDone(env: Env, pass: string, now: number): Promise<{ done: number; total: number; finished: boolean }> {
  const [finish, tally] = await db(env).batch([
    env.DB.prepare(
      "UPDATE passes SET finished_at = ? WHERE id = ? AND finished_at IS NULL AND NOT EXISTS (SELECT 1 FROM pass_ranges WHERE pass = ? AND done = 0)",
    ).bind(now, pass, pass),
    env.DB.prepare("SELECT COUNT(*) AS total, COALESCE(SUM(done), 0) AS done FROM pass_ranges WHERE pass = ?").bind(pass),
  ]);
  const row = (tally?.results[0] ?? { done: 0, total: 0 }) as { done: number; total: number };
  return { done: row.done, total: row.total, finished: (finish?.meta.changes ?? 0) === 1 };
}
