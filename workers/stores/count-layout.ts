import { metrics } from "../../metrics/recorder";
import { config } from "../../shared/config";
import { countDatabaseBinding } from "../../shared/count-databases";
import { RESHARD_PHASES, layoutWidth, type CountLayout, type ReshardPhase } from "../../shared/count-layout";
import { log } from "../../shared/log";
import { d1 } from "./d1";

/** The count_layout row (migrations/0014_count_layout.sql): the layout and where a reshard stands. */
export type LayoutRow = {
  databases: number;
  next_databases: number | null;
  phase: ReshardPhase | null;
  cursor: string | null;
  done: number;
  total: number;
  repaired: number;
  changed_at: number;
  /** COUNT_DATABASES when the first reshard began (migrations/0016); null on a row from before it was recorded. */
  count_databases: number | null;
};

/** The layout as this isolate last read it, and when. */
let cached: { layout: CountLayout; at: number } | null = null;

/** The stored row, read from the primary database (null: no reshard ever ran). */
export async function readLayoutRow(env: Env, caller = "count_layout"): Promise<LayoutRow | null> {
  return await d1(env, env.DB, caller).first<LayoutRow>(env.DB.prepare("SELECT * FROM count_layout WHERE id = 1"));
}

export function layoutOf(env: Env, row: LayoutRow | null): CountLayout {
  if (!row) return { databases: config(env).COUNT_DATABASES, next: null };
  const phase = row.phase;
  return {
    databases: row.databases,
    next: row.next_databases !== null && phase !== null && RESHARD_PHASES.includes(phase) ? { databases: row.next_databases, phase } : null,
  };
}

/** When this isolate last started reading the layout ahead of its expiry. */
let refreshedAt = 0;

/** The layout problems this isolate last logged (empty: none), so each is logged once, not on every refresh. */
let reportedProblems = "";

/**
 * The count layout every reader and writer of counts and settings follows:
 * this isolate's copy while younger than LAYOUT_TTL_MS, else one query to the
 * primary database. Past half its lifetime a read that uses the copy also
 * starts that query beside its own work (not awaited), so under steady
 * traffic no read waits for the layout. A reshard's phases each last longer
 * than the lifetime (RESHARD_GRACE_MS), so isolates are never more than one
 * phase apart. When the query fails the last layout read is used while it is
 * younger than RESHARD_GRACE_MS - LAYOUT_TTL_MS: the row can have moved on
 * one phase the moment this isolate read it, and the next phase's work waits
 * RESHARD_GRACE_MS after that, so an older copy could be two phases behind
 * (the rest, LAYOUT_TTL_MS, is left for the read or write that uses it). Past
 * that, or with none, the error stands: a guess could send a read where an
 * item has no row (a zero); the callers mark their reads failed and retry.
 */
export async function countLayout(env: Env, now = Date.now()): Promise<CountLayout> {
  const ttl = config(env).LAYOUT_TTL_MS;
  if (cached && now - cached.at < ttl) {
    if (now - cached.at >= ttl / 2 && now - refreshedAt >= ttl / 2) {
      refreshedAt = now;
      loadLayout(env, now).catch(() => undefined);
    }
    return cached.layout;
  }
  try {
    return await loadLayout(env, now);
  } catch (error) {
    if (cached && now - cached.at < config(env).RESHARD_GRACE_MS - ttl) return cached.layout;
    throw error;
  }
}

async function loadLayout(env: Env, now: number): Promise<CountLayout> {
  const row = await readLayoutRow(env);
  const layout = layoutOf(env, row);
  const problems = layoutProblems(env, row, layout);
  metrics.gauge("count_layout_problems", {}, problems.length);
  const said = problems.join("\n");
  if (said !== reportedProblems) {
    reportedProblems = said;
    if (problems.length > 0) log("error", "count_layout_problems", { problems });
  }
  if (!cached || cached.at <= now) cached = { layout, at: now };
  return layout;
}

/** Forgets this isolate's copy of the layout, so the next read asks the database (the reshard step, after it changes the row). */
export function forgetLayout(): void {
  cached = null;
}

/**
 * What in the deployment's configuration disagrees with its stored layout,
 * each said plainly (none when all agree). The stored row is the source of
 * truth for the counts and settings; COUNT_DATABASES still places the daily
 * history and the two indexes, which no reshard moves, so it must keep the
 * value it had when the first reshard began. And every database the layout
 * or COUNT_DATABASES names needs its binding: without one, each read or write
 * of an item there fails.
 */
export function layoutProblems(env: Env, row: LayoutRow | null, layout = layoutOf(env, row)): string[] {
  const k = config(env).COUNT_DATABASES;
  const problems: string[] = [];
  if (row?.count_databases != null && row.count_databases !== k) {
    problems.push(
      `COUNT_DATABASES is ${k}, but it was ${row.count_databases} when the first reshard began, and the daily history and the indexes are still where ${row.count_databases} places them: set it back to ${row.count_databases} (a reshard moves the counts, never COUNT_DATABASES).`,
    );
  }
  const width = Math.max(k, layoutWidth(layout));
  const missing = Array.from({ length: width }, (_, index) => countDatabaseBinding(index)).filter((name) => !bound(env, name));
  if (missing.length > 0) problems.push(`The count layout and COUNT_DATABASES use ${width} count databases, but wrangler.toml binds no D1 database as ${missing.join(", ")}.`);
  return problems;
}

function bound(env: Env, name: string): D1Database | undefined {
  return (env as unknown as Record<string, D1Database | undefined>)[name];
}

/** Count database i (`DB`, `DB_1`, ...); a binding missing from wrangler.toml is a deployment error, said plainly. */
export function countDatabaseAt(env: Env, index: number): D1Database {
  const name = countDatabaseBinding(index);
  const db = bound(env, name);
  if (!db) throw new Error(`the count layout needs a D1 binding named ${name} in wrangler.toml`);
  return db;
}

/** Every database either layout uses (both while a reshard runs), in index order. */
export function layoutDatabases(env: Env, layout: CountLayout): D1Database[] {
  return Array.from({ length: layoutWidth(layout) }, (_, index) => countDatabaseAt(env, index));
}

/**
 * Entries grouped by database, each under every database `indexes` names for
 * it (two for an item a reshard is moving, at some phases).
 */
export function groupByIndexes<T>(env: Env, entries: readonly T[], indexes: (entry: T) => number[]): Map<D1Database, T[]> {
  const groups = new Map<D1Database, T[]>();
  for (const entry of entries) {
    for (const index of indexes(entry)) {
      const db = countDatabaseAt(env, index);
      const group = groups.get(db);
      if (group) group.push(entry);
      else groups.set(db, [entry]);
    }
  }
  return groups;
}
