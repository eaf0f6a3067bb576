// The SQL of a reshard: the count_layout row it advances, and the counts and
// settings rows it counts, reads, copies, checks and deletes (docs/reads.md, "Resharding").
import type { ReshardCursor } from "../../shared/reshard";
import { countDatabaseAt, type LayoutRow } from "./count-layout";
import { d1 } from "./d1";
import { UPSERT as SETTINGS_UPSERT } from "./item-settings";

export type CountRow = { item_type: string; item_id: string; likes: number; views: number; shares: number; saves: number; seq: number; updated_at: number; counted_at: number };
export type SettingsRow = { item_type: string; item_id: string; owner_id: string | null; visibility: string; hide_counts: number; updated_at: number };
export type Rows = { table: "item_counts"; rows: CountRow[] } | { table: "item_settings"; rows: SettingsRow[] };

/** A copied counts row replaces only an older one: a snapshot the aggregator wrote to both layouts meanwhile wins. */
const COPY_COUNTS = `INSERT INTO item_counts (item_type, item_id, likes, views, shares, saves, seq, updated_at, counted_at)
  VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
  ON CONFLICT (item_type, item_id) DO UPDATE
    SET likes = excluded.likes, views = excluded.views, shares = excluded.shares, saves = excluded.saves,
        seq = excluded.seq, updated_at = excluded.updated_at, counted_at = excluded.counted_at
    WHERE excluded.seq > item_counts.seq`;

const KEYS = "(item_type, item_id) IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?1))";

/**
 * Writes the layout row only over the one a step read (a second runner's
 * step in between makes this one's a no-op); with none read, creates it.
 * `count_databases` is written only when the row is created: no step changes it.
 */
export async function writeLayoutRow(env: Env, read: LayoutRow | null, next: LayoutRow, caller: string): Promise<void> {
  const values = [next.databases, next.next_databases, next.phase, next.cursor, next.done, next.total, next.repaired, next.changed_at];
  const statement = read
    ? env.DB.prepare(
        `UPDATE count_layout SET databases = ?1, next_databases = ?2, phase = ?3, cursor = ?4, done = ?5, total = ?6, repaired = ?7, changed_at = ?8
         WHERE id = 1 AND phase IS ?9 AND cursor IS ?10 AND changed_at = ?11`,
      ).bind(...values, read.phase, read.cursor, read.changed_at)
    : env.DB.prepare(
        "INSERT OR IGNORE INTO count_layout (id, databases, next_databases, phase, cursor, done, total, repaired, changed_at, count_databases) VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
      ).bind(...values, next.count_databases);
  await d1(env, env.DB, caller).run(statement);
}

/** Rows the old layout holds (counts and settings), for the progress bar: one query per database. */
export async function countRows(env: Env, databases: number, caller: string): Promise<number> {
  const counts = await Promise.all(
    Array.from({ length: databases }, (_, index) => {
      const db = countDatabaseAt(env, index);
      return d1(env, db, caller).first<{ n: number }>(db.prepare("SELECT (SELECT COUNT(*) FROM item_counts) + (SELECT COUNT(*) FROM item_settings) AS n"));
    }),
  );
  return counts.reduce((sum, row) => sum + (row?.n ?? 0), 0);
}

/** The next rows of one old database's table, in key order: one query. */
export async function readRows(env: Env, cursor: ReshardCursor, limit: number, caller: string): Promise<Rows> {
  const db = countDatabaseAt(env, cursor.db);
  const rows = await d1(env, db, caller).all<CountRow & SettingsRow>(
    db.prepare(`SELECT * FROM ${cursor.table} WHERE (item_type, item_id) > (?1, ?2) ORDER BY item_type, item_id LIMIT ?3`).bind(...cursor.after, limit),
  );
  return { table: cursor.table, rows } as Rows;
}

/** Rows into one database, one batch (one transaction), each only over an older row. */
export async function writeRows(env: Env, db: D1Database, work: Rows, caller: string): Promise<void> {
  await d1(env, db, caller).batch(
    work.table === "item_counts"
      ? work.rows.map((r) => db.prepare(COPY_COUNTS).bind(r.item_type, r.item_id, r.likes, r.views, r.shares, r.saves, r.seq, r.updated_at, r.counted_at))
      : work.rows.map((r) => db.prepare(SETTINGS_UPSERT).bind(r.item_type, r.item_id, r.owner_id, r.visibility, r.hide_counts, r.updated_at)),
  );
}

/** The version (counts: seq; settings: updated_at) one database holds of each of these rows' items, by item key. */
export async function storedVersions(env: Env, db: D1Database, work: Rows, caller: string): Promise<Map<string, number>> {
  const keys = JSON.stringify(work.rows.map((r) => [r.item_type, r.item_id]));
  const version = work.table === "item_counts" ? "seq" : "updated_at";
  const stored = await d1(env, db, caller).all<{ item_type: string; item_id: string; version: number }>(
    db.prepare(`SELECT item_type, item_id, ${version} AS version FROM ${work.table} WHERE ${KEYS}`).bind(keys),
  );
  return new Map(stored.map((r) => [`${r.item_type}:${r.item_id}`, r.version]));
}

/** Deletes these rows' items from one database's table. */
export async function deleteRows(env: Env, db: D1Database, work: Rows, caller: string): Promise<void> {
  const keys = JSON.stringify(work.rows.map((r) => [r.item_type, r.item_id]));
  await d1(env, db, caller).run(db.prepare(`DELETE FROM ${work.table} WHERE ${KEYS}`).bind(keys));
}
