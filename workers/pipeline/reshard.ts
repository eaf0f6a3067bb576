import { config } from "../../shared/config";
import { countDatabaseIndex } from "../../shared/count-databases";
import type { ReshardPhase } from "../../shared/count-layout";
import { settleAll } from "../../shared/settle";
import { ReshardCursor, type ReshardResponse } from "../../shared/reshard";
import { metrics } from "../../metrics/recorder";
import { invalid, unavailable } from "../lib/errors";
import { centralStore } from "../stores/central-tables";
import { countDatabaseAt, forgetLayout, layoutProblems, readLayoutRow, type LayoutRow } from "../stores/count-layout";
import { settingsFromRow } from "../stores/item-settings";
import { countRows, deleteRows, readRows, storedVersions, writeLayoutRow, writeRows, type CountRow, type Rows, type SettingsRow } from "../stores/reshard-rows";

const CALLER = "reshard";
const CENTRAL_CONCURRENCY = 16;

/**
 * The tables each phase walks in every database of the old layout. `dual`
 * walks the settings only, onto the central store, before any read can go
 * there for an item it did not before (reads change at `copy`).
 */
const TABLES: Record<ReshardPhase, readonly ReshardCursor["table"][]> = {
  dual: ["item_settings"],
  copy: ["item_counts", "item_settings"],
  switch: ["item_counts", "item_settings"],
  cleanup: ["item_counts", "item_settings"],
};

/**
 * One step of moving the counts and settings from the current count layout to
 * one of `target` databases (`npm run reshard`, docs/reads.md "Resharding").
 * Where the reshard stands lives in the count_layout row, so any runner goes
 * on from it; each step writes only with guards (a row replaces an older one,
 * a delete only of a row already verified in its new database), so a step
 * repeated after a lost answer changes nothing twice.
 */
export async function reshardStep(env: Env, target: number, limit: number, now = Date.now()): Promise<ReshardResponse> {
  const row = await readLayoutRow(env, CALLER);
  // A reshard moves only the counts and settings: with the history and indexes misplaced or a database unbound, it would make matters worse.
  const problems = layoutProblems(env, row);
  if (problems.length > 0) throw invalid(`The configuration disagrees with the stored count layout; fix it before resharding. ${problems.join(" ")}`);
  if (!row || row.next_databases === null || row.phase === null) {
    const from = row?.databases ?? config(env).COUNT_DATABASES;
    if (target === from) return answer({ from, to: from, phase: "done" }, row);
    for (let index = 0; index < target; index++) {
      try {
        countDatabaseAt(env, index);
      } catch (error) {
        throw invalid(`${target} count databases need more D1 bindings: ${(error as Error).message}.`);
      }
    }
    const total = await countRows(env, from, CALLER);
    const started: LayoutRow = {
      databases: from,
      next_databases: target,
      phase: "dual",
      cursor: null,
      done: 0,
      total,
      repaired: 0,
      changed_at: now,
      count_databases: row ? row.count_databases : config(env).COUNT_DATABASES,
    };
    await save(env, row, started);
    return answer({ from, to: target, phase: "dual" }, started, config(env).RESHARD_GRACE_MS);
  }
  if (row.next_databases !== target) {
    throw invalid(`A reshard from ${row.databases} to ${row.next_databases} count databases is under way: finish it first (--databases ${row.next_databases}).`);
  }
  const position = { from: row.databases, to: target, phase: row.phase };
  // Every isolate must have seen this phase before its work begins (RESHARD_GRACE_MS > LAYOUT_TTL_MS).
  const wait = row.changed_at + config(env).RESHARD_GRACE_MS - now;
  if (wait > 0) return answer(position, row, wait);
  const tables = TABLES[row.phase];
  const cursor = row.cursor ? ReshardCursor.parse(JSON.parse(row.cursor)) : { db: 0, table: tables[0]!, after: ["", ""] as [string, string] };
  if (cursor.db >= row.databases) {
    const next: Record<ReshardPhase, Partial<LayoutRow>> = {
      dual: { phase: "copy" },
      copy: { phase: "switch" },
      switch: { phase: "cleanup" },
      cleanup: { databases: target, next_databases: null, phase: null },
    };
    return await advance(env, row, { ...row, ...next[row.phase], cursor: null, done: 0, changed_at: now });
  }
  const rows = await readRows(env, cursor, limit, CALLER);
  // A database of the old layout also holds rows the copy brought in (their new home): only rows whose new home is elsewhere move.
  const moving = rows.rows.filter((r) => countDatabaseIndex(`${r.item_type}:${r.item_id}`, target) !== cursor.db) as typeof rows.rows;
  const work = { table: rows.table, rows: moving } as Rows;
  let repaired = 0;
  if (row.phase === "dual") await backfillCentral(env, rows.rows as SettingsRow[]);
  else if (row.phase === "copy") await copy(env, work, target);
  else if (row.phase === "switch") repaired = await verify(env, work, target);
  else await remove(env, countDatabaseAt(env, cursor.db), work);
  metrics.count("reshard_rows_total", { phase: row.phase, outcome: "visited" }, rows.rows.length);
  metrics.count("reshard_rows_total", { phase: row.phase, outcome: "moved" }, moving.length);
  if (repaired > 0) metrics.count("reshard_rows_total", { phase: row.phase, outcome: "repaired" }, repaired);
  const last = rows.rows.at(-1);
  const following: ReshardCursor =
    rows.rows.length === limit && last
      ? { ...cursor, after: [last.item_type, last.item_id] }
      : cursor.table !== tables.at(-1)
        ? { db: cursor.db, table: tables[tables.indexOf(cursor.table) + 1]!, after: ["", ""] }
        : { db: cursor.db + 1, table: tables[0]!, after: ["", ""] };
  const stepped = { ...row, cursor: JSON.stringify(following), done: row.done + rows.rows.length, repaired: row.repaired + repaired };
  await save(env, row, stepped);
  return answer(position, stepped, 0, moving.length);
}

function answer(position: { from: number; to: number; phase: ReshardPhase | "done" }, row: LayoutRow | null, waitMs = 0, moved = 0): ReshardResponse {
  return { ...position, visited: row?.phase ? row.done : 0, total: row?.total ?? 0, moved, repaired: row?.repaired ?? 0, wait_ms: Math.max(0, Math.ceil(waitMs)) };
}

async function advance(env: Env, row: LayoutRow, next: LayoutRow): Promise<ReshardResponse> {
  await save(env, row, next);
  const done = next.phase === null;
  metrics.count("reshard_phases_total", { phase: next.phase ?? "done" });
  return answer({ from: done ? next.databases : row.databases, to: row.next_databases!, phase: next.phase ?? "done" }, next, done ? 0 : config(env).RESHARD_GRACE_MS);
}

/**
 * Writes the row only over the one this step read (a second runner's step in
 * between makes this one's a no-op: its writes were guarded, its cursor is
 * dropped), then forgets this isolate's copy of the layout.
 */
async function save(env: Env, read: LayoutRow | null, next: LayoutRow): Promise<void> {
  await writeLayoutRow(env, read, next, CALLER);
  forgetLayout();
}

/** Rows grouped by their database in the new layout. */
function byNewDatabase<T extends { item_type: string; item_id: string }>(env: Env, rows: readonly T[], target: number): Map<D1Database, T[]> {
  return Map.groupBy(rows, (r) => countDatabaseAt(env, countDatabaseIndex(`${r.item_type}:${r.item_id}`, target)));
}

/** Copies moving rows into their new databases: one batch (one transaction) per database, each row only over an older one. */
async function copy(env: Env, work: Rows, target: number): Promise<void> {
  await Promise.all(
    [...byNewDatabase<CountRow | SettingsRow>(env, work.rows, target)].map(([db, rows]) =>
      writeRows(env, db, { table: work.table, rows } as Rows, CALLER),
    ),
  );
}

/**
 * Every settings row onto the central store's row of its item (only over
 * older settings): a feed spread over more than two databases reads settings
 * there, and rows written before the central store kept them are in D1 only.
 */
async function backfillCentral(env: Env, rows: readonly SettingsRow[]): Promise<void> {
  if (rows.length === 0) return;
  const central = await centralStore(env).catch(() => {
    throw unavailable("The central store cannot be reached; the copy waits for it.", 5);
  });
  if (!central) return;
  const results = await settleAll(rows, CENTRAL_CONCURRENCY, (r) => central.writeSettings(`${r.item_type}:${r.item_id}`, settingsFromRow(r), r.updated_at));
  if (results.some((result) => result.status === "rejected")) throw unavailable("The central store refused some settings; the step will be repeated.", 5);
}

/** Compares moving rows with their new databases' copies; copies again any missing or older one. Answers how many. */
async function verify(env: Env, work: Rows, target: number): Promise<number> {
  let repaired = 0;
  await Promise.all(
    [...byNewDatabase<CountRow | SettingsRow>(env, work.rows, target)].map(async ([db, rows]) => {
      const held = await storedVersions(env, db, { table: work.table, rows } as Rows, CALLER);
      const behind = rows.filter((r) => (held.get(`${r.item_type}:${r.item_id}`) ?? -1) < (work.table === "item_counts" ? (r as CountRow).seq : r.updated_at));
      if (behind.length === 0) return;
      repaired += behind.length;
      await copy(env, { table: work.table, rows: behind } as Rows, target);
    }),
  );
  return repaired;
}

/** Deletes moving rows from their old database (verified in the new one, and no isolate writes or reads them there any more). */
async function remove(env: Env, db: D1Database, work: Rows): Promise<void> {
  if (work.rows.length === 0) return;
  await deleteRows(env, db, work, CALLER);
}
