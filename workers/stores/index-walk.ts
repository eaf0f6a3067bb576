import { DRAW_RANGE } from "../../shared/item-index";
import type { RangeBounds } from "../../shared/passes";
import { countDatabases, userIndexDatabaseFor } from "./count-databases";
import { d1 } from "./d1";

/** The two indexes (migrations/0007_item_index.sql, 0009_user_index.sql) and the column holding each one's key. */
const INDEXES = { item_index: "item", user_index: "user" } as const;
export type IndexName = keyof typeof INDEXES;

export type IndexEntry = { draw: number; key: string };

/**
 * The next `limit` entries after `after` in (draw, key) order, over every
 * count database: one query per database, merged. Ordering by the pair, not
 * the draw alone, visits every key when several share a draw (with billions
 * of items, many do). `done` when no entry is left after the page. Within
 * `range`, one database's rows below its `hi` alone: one query.
 */
export async function indexPage(
  env: Env,
  index: IndexName,
  after: IndexEntry | null,
  limit: number,
  caller: string,
  range?: RangeBounds,
): Promise<{ entries: IndexEntry[]; done: boolean }> {
  const column = INDEXES[index];
  const from = after ?? { draw: -1, key: "" };
  const databases = countDatabases(env);
  const perDatabase = await Promise.all(
    (range ? [databases[range.db]!] : databases).map((db) =>
      d1(env, db, caller).all<{ draw: number; key: string }>(
        db
          .prepare(`SELECT draw, ${column} AS key FROM ${index} WHERE (draw, ${column}) > (?, ?) AND draw < ? ORDER BY draw, ${column} LIMIT ?`)
          .bind(from.draw, from.key, range?.hi ?? DRAW_RANGE, limit),
      ),
    ),
  );
  const merged = perDatabase.flat().sort((a, b) => a.draw - b.draw || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  // A database that filled its page may hold more after it.
  return { entries: merged.slice(0, limit), done: merged.length <= limit && perDatabase.every((rows) => rows.length < limit) };
}

/** A deleted user's entry in the index of users. */
export async function unindexUser(env: Env, user: string, caller: string): Promise<void> {
  const db = userIndexDatabaseFor(env, user);
  await d1(env, db, caller).run(db.prepare("DELETE FROM user_index WHERE user = ?").bind(user));
}

/** The index's size is estimated from the share of it in the first 1/ESTIMATE_SLICE of the draws. */
const ESTIMATE_SLICE = 256;
/** Below this many items in that slice the estimate is too rough: the index is counted whole (it is small). */
const ESTIMATE_ENOUGH = 100;

/**
 * How many items the index holds, about: the first 1/ESTIMATE_SLICE of the
 * draws counted and scaled up, or the whole index when that slice holds few
 * (one query per database either way).
 */
export async function estimateIndexSize(env: Env, caller: string): Promise<number> {
  const sliced = await itemsIndexedBelow(env, DRAW_RANGE / ESTIMATE_SLICE, caller);
  return sliced >= ESTIMATE_ENOUGH ? sliced * ESTIMATE_SLICE : await itemsIndexedBelow(env, DRAW_RANGE, caller);
}

/** Items in the item index with a draw below `below`, over every count database: one query per database. */
export async function itemsIndexedBelow(env: Env, below: number, caller: string): Promise<number> {
  const counts = await Promise.all(
    countDatabases(env).map((db) => d1(env, db, caller).first<{ n: number }>(db.prepare("SELECT COUNT(*) AS n FROM item_index WHERE draw < ?").bind(below))),
  );
  return counts.reduce((sum, row) => sum + (row?.n ?? 0), 0);
}
