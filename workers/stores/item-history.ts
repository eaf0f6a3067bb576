import type { CountSnapshot } from "../../shared/emissions";
import { d1 } from "./d1";
import { splitItem } from "./item-key";

/** `2026-12-01`: the UTC day a time falls in. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * Writes each snapshot into its item's row for today (UTC), in one batch, and
 * returns the snapshots that became their item's newest (the ones worth
 * publishing live).
 * A snapshot is written only when its sequence is newer than every row the
 * item has, today's or an earlier day's: a redelivered snapshot, or a late one
 * overtaken by a newer, changes nothing, so the rows' totals never go back in
 * time and a day's change (the difference of two day-end rows) stays exact.
 * Takes the database to write, so a deployment that spreads items over
 * several D1 databases routes each item's history with its counts.
 */
export async function writeHistory(
  env: Env,
  db: D1Database,
  snapshots: ReadonlyMap<string, CountSnapshot>,
  now = Date.now(),
): Promise<Map<string, CountSnapshot>> {
  if (snapshots.size === 0) return new Map();
  const statement = db.prepare(
    `INSERT INTO item_history (item_type, item_id, day, likes, saves, views, shares, unique_viewers, seq, updated_at)
     SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10
     WHERE NOT EXISTS (SELECT 1 FROM item_history WHERE item_type = ?1 AND item_id = ?2 AND seq >= ?9)
     ON CONFLICT (item_type, item_id, day) DO UPDATE
       SET likes = excluded.likes, saves = excluded.saves, views = excluded.views, shares = excluded.shares,
           unique_viewers = excluded.unique_viewers, seq = excluded.seq, updated_at = excluded.updated_at`,
  );
  const day = utcDay(now);
  const entries = [...snapshots];
  const results = await d1(env, db, "aggregator").batch(
    entries.map(([item, { seq, counts, unique_viewers }]) => {
      const [type, id] = splitItem(item);
      return statement.bind(type, id, day, counts.likes, counts.saves, counts.views, counts.shares, unique_viewers ?? null, seq, now);
    }),
  );
  return new Map(entries.filter((_, i) => (results[i]?.meta.changes ?? 0) > 0));
}
