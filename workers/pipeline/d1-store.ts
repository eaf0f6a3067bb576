import type { Counts } from "../../shared/counters";
import type { CountSnapshot } from "../../shared/emissions";
import { countDatabases } from "../lib/count-databases";
import { indexDraw, userIndexDraw } from "../../shared/item-index";
import { d1 } from "../lib/d1";
import { readStoredCounts as readMany, splitItem } from "../lib/stored-counts";

export { splitItem };

/**
 * One row per item; the row changes only when the snapshot's sequence is
 * newer than the stored one, so a redelivered or late snapshot changes nothing.
 */
const UPSERT = `INSERT INTO item_counts (item_type, item_id, likes, views, shares, saves, seq, updated_at, counted_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (item_type, item_id) DO UPDATE
    SET likes = excluded.likes, views = excluded.views, shares = excluded.shares, saves = excluded.saves,
        seq = excluded.seq, updated_at = excluded.updated_at, counted_at = excluded.counted_at
    WHERE excluded.seq > item_counts.seq`;

/** An item counted (or a user seen) for the first time enters its index; after that the statement writes nothing. */
const INDEX = "INSERT OR IGNORE INTO item_index (draw, item) VALUES (?, ?)";
const USER_INDEX = "INSERT OR IGNORE INTO user_index (draw, user) VALUES (?, ?)";

/** The index rows a database holds besides its counts: items whose counts live in another database, and users. */
export type IndexRows = { items?: readonly string[]; users?: readonly string[] };

/**
 * Writes one database's share of a batch in one `batch()` (one transaction):
 * the snapshots of the items it holds the counts of, and the index rows it
 * holds (items by default: those of the snapshots). Answers how many rows it
 * changed: a snapshot no newer than the stored one, or an index row already
 * there, changes none.
 */
export async function writeSnapshots(
  env: Env,
  db: D1Database,
  snapshots: ReadonlyMap<string, CountSnapshot>,
  index: IndexRows = {},
  now = Date.now(),
  caller = "aggregator",
): Promise<number> {
  const upsert = db.prepare(UPSERT);
  const items = db.prepare(INDEX);
  const users = db.prepare(USER_INDEX);
  const statements = [
    ...[...snapshots].map(([item, { seq, counts, at }]) =>
      upsert.bind(...splitItem(item), counts.likes, counts.views, counts.shares, counts.saves, seq, now, at ?? 0),
    ),
    ...(index.items ?? [...snapshots.keys()]).map((item) => items.bind(indexDraw(item), item)),
    ...(index.users ?? []).map((user) => users.bind(userIndexDraw(user), user)),
  ];
  const results = await d1(env, db, caller).batch(statements);
  return results.reduce((sum, result) => sum + (result.meta.changes ?? 0), 0);
}

/** The item's stored snapshot, from the database that holds it (for reconciliation and the tests). */
export async function readStoredCounts(env: Env, item: string): Promise<{ seq: number; counts: Counts } | null> {
  const { found, failed } = await readMany(env, [item], "reconcile", 30_000);
  if (failed.length > 0) throw new Error(`the count database of ${item} cannot be read`);
  const stored = found.get(item);
  return stored ? { seq: stored.seq, counts: stored.counts } : null;
}

/** Items whose counts were stored most recently, newest first, over every count database. */
export async function recentItems(env: Env, since: number, limit: number): Promise<string[]> {
  const perDatabase = await Promise.all(
    countDatabases(env).map((db) =>
      d1(env, db, "reconcile").all<{ item_type: string; item_id: string; updated_at: number }>(
        db.prepare("SELECT item_type, item_id, updated_at FROM item_counts WHERE updated_at >= ? ORDER BY updated_at DESC LIMIT ?").bind(since, limit),
      ),
    ),
  );
  return perDatabase
    .flat()
    .sort((a, b) => b.updated_at - a.updated_at)
    .slice(0, limit)
    .map((row) => `${row.item_type}:${row.item_id}`);
}
