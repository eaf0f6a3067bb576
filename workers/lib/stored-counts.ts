import type { Counts } from "../../shared/counters";
import { UNKNOWN_ITEM, type ItemSettings } from "../../shared/privacy";
import { settingsFromRow, type SettingsColumns } from "../privacy/item-settings";
import { byCountDatabase } from "./count-databases";
import { d1, type QueryPath } from "./d1";

/** An item's row in the regional store: its counts, the snapshot's sequence, and when the aggregator wrote it. */
export type StoredCounts = { counts: Counts; seq: number; asOf: number };

type CountColumns = { kind: "c" | "s"; likes: number; views: number; shares: number; saves: number; seq: number; updated_at: number };
type Row = CountColumns & SettingsColumns & { item_type: string; item_id: string };

/**
 * Every item of a list in one statement, with its settings: the pairs travel
 * as one JSON parameter (D1 allows 100 bound parameters; a feed has up to 100
 * items), each half of the union looks the items up by primary key, and a row
 * comes back only for an item with counts (kind 'c') or settings (kind 's'):
 * a long tail's untouched items cost no row in the answer (they are zeros
 * and public). An item's settings live in the database that holds its
 * counts, so a feed's privacy check costs no query of its own. Two `IN`
 * lookups, not two outer joins of the list: the joins' plan cost a quiet
 * local server about 4 ms a feed at the median and 10 ms at the p99
 * (docs/benchmarks.md).
 */
const SELECT = `WITH wanted AS (SELECT json_extract(value, '$[0]') AS item_type, json_extract(value, '$[1]') AS item_id FROM json_each(?1))
  SELECT 'c' AS kind, item_type, item_id, likes, views, shares, saves, seq, updated_at, NULL AS owner_id, NULL AS visibility, NULL AS hide_counts
    FROM item_counts WHERE (item_type, item_id) IN (SELECT item_type, item_id FROM wanted)
  UNION ALL
  SELECT 's', item_type, item_id, NULL, NULL, NULL, NULL, NULL, NULL, owner_id, visibility, hide_counts
    FROM item_settings WHERE (item_type, item_id) IN (SELECT item_type, item_id FROM wanted)`;

/** `post:123` → `["post", "123"]`: D1 keeps type and id apart, ids as TEXT. */
export function splitItem(item: string): [string, string] {
  const colon = item.indexOf(":");
  return [item.slice(0, colon), item.slice(colon + 1)];
}

export type StoreRead = {
  /** Items the store has a row for; an item it has no row for was never counted (zeros). */
  found: Map<string, StoredCounts>;
  /** The settings of every item read (an item with no settings row is an unknown item). */
  settings: Map<string, ItemSettings>;
  /** Items held by a database that failed or did not answer in time. */
  failed: string[];
};

/**
 * The stored counts of many items: one query per database that holds some of
 * them, all in parallel, each bounded by `timeoutMs`. A database that fails
 * fails only its own items.
 */
export async function readStoredCounts(env: Env, items: readonly string[], caller: string, timeoutMs: number, path?: QueryPath): Promise<StoreRead> {
  const found = new Map<string, StoredCounts>();
  const settings = new Map<string, ItemSettings>();
  const failed: string[] = [];
  const groups = [...byCountDatabase(env, items, (item) => item)];
  await Promise.all(
    groups.map(async ([db, group]) => {
      try {
        const pairs = JSON.stringify(group.map(splitItem));
        const rows = await d1(env, db, caller, timeoutMs, path).all<Row>(db.prepare(SELECT).bind(pairs));
        for (const row of rows) {
          const key = `${row.item_type}:${row.item_id}`;
          if (row.kind === "c") found.set(key, fromRow(row));
          else settings.set(key, settingsFromRow(row));
        }
        for (const key of group) if (!settings.has(key)) settings.set(key, UNKNOWN_ITEM);
      } catch {
        failed.push(...group);
      }
    }),
  );
  return { found, settings, failed };
}

function fromRow(row: Row): StoredCounts {
  return { counts: { likes: row.likes, views: row.views, shares: row.shares, saves: row.saves }, seq: row.seq, asOf: row.updated_at };
}
