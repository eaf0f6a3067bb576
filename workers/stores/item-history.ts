import type { CountSnapshot } from "../../shared/emissions";
import { d1 } from "./d1";
import { splitItem } from "./item-key";

/** `2026-12-01`: the UTC day a time falls in. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** What writes each snapshot into its item's history, and reads back which it wrote. */
export type HistoryWrites = {
  statements: D1PreparedStatement[];
  /** From those statements' results (in their order): the snapshots that became their item's newest, the ones worth publishing live. */
  newest(results: readonly D1Result[]): Map<string, CountSnapshot>;
};

/**
 * The statements that write each snapshot into its item's row for today
 * (UTC), to run in the caller's batch (the aggregator's, beside the counts
 * of the same database: one transaction, one commit).
 * A snapshot is written only when its sequence is newer than every row the
 * item has, today's or an earlier day's: a redelivered snapshot, or a late one
 * overtaken by a newer, changes nothing, so the rows' totals never go back in
 * time and a day's change (the difference of two day-end rows) stays exact.
 * Takes the database to write, so a deployment that spreads items over
 * several D1 databases routes each item's history with its counts.
 */
export function historyWrites(db: D1Database, snapshots: ReadonlyMap<string, CountSnapshot>, now = Date.now()): HistoryWrites {
  const entries = [...snapshots];
  if (entries.length === 0) return { statements: [], newest: () => new Map() };
  const statement = db.prepare(
    `INSERT INTO item_history (item_type, item_id, day, likes, saves, views, shares, unique_viewers, seq, updated_at)
     SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10
     WHERE NOT EXISTS (SELECT 1 FROM item_history WHERE item_type = ?1 AND item_id = ?2 AND seq >= ?9)
     ON CONFLICT (item_type, item_id, day) DO UPDATE
       SET likes = excluded.likes, saves = excluded.saves, views = excluded.views, shares = excluded.shares,
           unique_viewers = excluded.unique_viewers, seq = excluded.seq, updated_at = excluded.updated_at`,
  );
  const day = utcDay(now);
  return {
    statements: entries.map(([item, { seq, counts, unique_viewers }]) => {
      const [type, id] = splitItem(item);
      return statement.bind(type, id, day, counts.likes, counts.saves, counts.views, counts.shares, unique_viewers ?? null, seq, now);
    }),
    newest: (results) => new Map(entries.filter((_, i) => (results[i]?.meta.changes ?? 0) > 0)),
  };
}

/** A day's row of an item's history: its end-of-day totals. */
export type HistoryRow = { day: string; likes: number; saves: number; views: number; shares: number };

/** An item's rows from day `first` on, plus the last row before it (the first day's baseline), oldest first. One query. */
export async function historyRows(env: Env, db: D1Database, item: string, first: string, caller: string): Promise<HistoryRow[]> {
  const [type, id] = splitItem(item);
  return await d1(env, db, caller).all<HistoryRow>(
    db.prepare(
      `SELECT day, likes, saves, views, shares FROM item_history
       WHERE item_type = ?1 AND item_id = ?2
         AND day >= (SELECT COALESCE(MAX(day), ?3) FROM item_history WHERE item_type = ?1 AND item_id = ?2 AND day < ?3)
       ORDER BY day`,
    ).bind(type, id, first),
  );
}

/** The unique viewers of each item's newest history row in one database, in one query; an item without history has none. */
export async function newestUniqueViewers(env: Env, db: D1Database, items: readonly string[], caller: string): Promise<Map<string, number>> {
  const pairs = items.map(splitItem);
  const results = await d1(env, db, caller).all<{ item_type: string; item_id: string; unique_viewers: number | null }>(
    db.prepare(
      `SELECT h.item_type, h.item_id, h.unique_viewers FROM item_history h
       JOIN (SELECT item_type, item_id, MAX(day) AS day FROM item_history
             WHERE (item_type, item_id) IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?))
             GROUP BY item_type, item_id) newest
         ON h.item_type = newest.item_type AND h.item_id = newest.item_id AND h.day = newest.day`,
    ).bind(JSON.stringify(pairs)),
  );
  return new Map(results.map((row) => [`${row.item_type}:${row.item_id}`, row.unique_viewers ?? 0]));
}
