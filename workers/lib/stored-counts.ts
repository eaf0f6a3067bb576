import type { Counts } from "../../shared/counters";
import { byCountDatabase } from "./count-databases";
import { d1 } from "./d1";

/** An item's row in the regional store: its counts, the snapshot's sequence, and when the aggregator wrote it. */
export type StoredCounts = { counts: Counts; seq: number; asOf: number };

type Row = { item_type: string; item_id: string; likes: number; views: number; shares: number; saves: number; seq: number; updated_at: number };

/**
 * Every item of a list in one statement: the pairs travel as one JSON
 * parameter (D1 allows 100 bound parameters; a feed has up to 100 items), and
 * the row-value IN lets SQLite look each one up by primary key.
 */
const SELECT = `SELECT item_type, item_id, likes, views, shares, saves, seq, updated_at FROM item_counts
  WHERE (item_type, item_id) IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?1))`;

/** `post:123` → `["post", "123"]`: D1 keeps type and id apart, ids as TEXT. */
export function splitItem(item: string): [string, string] {
  const colon = item.indexOf(":");
  return [item.slice(0, colon), item.slice(colon + 1)];
}

export type StoreRead = {
  /** Items the store has a row for; an item it has no row for was never counted (zeros). */
  found: Map<string, StoredCounts>;
  /** Items held by a database that failed or did not answer in time. */
  failed: string[];
};

/**
 * The stored counts of many items: one query per database that holds some of
 * them, all in parallel, each bounded by `timeoutMs`. A database that fails
 * fails only its own items.
 */
export async function readStoredCounts(env: Env, items: readonly string[], caller: string, timeoutMs: number): Promise<StoreRead> {
  const found = new Map<string, StoredCounts>();
  const failed: string[] = [];
  const groups = [...byCountDatabase(env, items, (item) => item)];
  await Promise.all(
    groups.map(async ([db, group]) => {
      try {
        const pairs = JSON.stringify(group.map(splitItem));
        const rows = await d1(env, db, caller, timeoutMs).all<Row>(db.prepare(SELECT).bind(pairs));
        for (const row of rows) found.set(`${row.item_type}:${row.item_id}`, fromRow(row));
      } catch {
        failed.push(...group);
      }
    }),
  );
  return { found, failed };
}

function fromRow(row: Row): StoredCounts {
  return { counts: { likes: row.likes, views: row.views, shares: row.shares, saves: row.saves }, seq: row.seq, asOf: row.updated_at };
}
