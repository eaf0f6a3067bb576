import { COUNTER_TYPES, zeroCounts, type Counts } from "../../shared/counters";
import type { CountSnapshot } from "../../shared/emissions";

/** `post:123` → `["post", "123"]`: D1 keeps type and id apart, ids as TEXT. */
export function splitItem(item: string): [string, string] {
  const colon = item.indexOf(":");
  return [item.slice(0, colon), item.slice(colon + 1)];
}

/**
 * Writes count snapshots to D1 in one batch (one transaction). A row changes
 * only when the snapshot's sequence is newer than the stored one, so a
 * redelivered or late snapshot changes nothing.
 */
export async function writeSnapshots(db: D1Database, snapshots: ReadonlyMap<string, CountSnapshot>, now = Date.now()): Promise<void> {
  if (snapshots.size === 0) return;
  const rows = COUNTER_TYPES.map(() => "(?, ?, ?, ?, ?, ?)").join(", ");
  const statement = db.prepare(
    `INSERT INTO counters (item_type, item_id, counter, count, seq, updated_at) VALUES ${rows}
     ON CONFLICT (item_type, item_id, counter) DO UPDATE
       SET count = excluded.count, seq = excluded.seq, updated_at = excluded.updated_at
       WHERE excluded.seq > counters.seq`,
  );
  await db.batch(
    [...snapshots].map(([item, { seq, counts }]) => {
      const [type, id] = splitItem(item);
      return statement.bind(...COUNTER_TYPES.flatMap((counter) => [type, id, counter, counts[counter], seq, now]));
    }),
  );
}

/** The item's stored snapshot; `seq` is the oldest of its rows, so a partly old row never looks current. */
export async function readStoredCounts(db: D1Database, item: string): Promise<{ seq: number; counts: Counts } | null> {
  const [type, id] = splitItem(item);
  const { results } = await db
    .prepare("SELECT counter, count, seq FROM counters WHERE item_type = ? AND item_id = ?")
    .bind(type, id)
    .all<{ counter: string; count: number; seq: number }>();
  if (results.length === 0) return null;
  const counts = zeroCounts();
  for (const row of results) if ((COUNTER_TYPES as readonly string[]).includes(row.counter)) counts[row.counter as keyof Counts] = row.count;
  return { seq: Math.min(...results.map((row) => row.seq)), counts };
}

/** Items whose counts D1 stored most recently, newest first. */
export async function recentItems(db: D1Database, since: number, limit: number): Promise<string[]> {
  const { results } = await db
    .prepare(
      `SELECT item_type, item_id, MAX(updated_at) AS at FROM counters WHERE updated_at >= ?
       GROUP BY item_type, item_id ORDER BY at DESC LIMIT ?`,
    )
    .bind(since, limit)
    .all<{ item_type: string; item_id: string }>();
  return results.map((row) => `${row.item_type}:${row.item_id}`);
}
