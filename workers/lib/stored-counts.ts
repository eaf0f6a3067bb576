import type { Counts } from "../../shared/counters";
import { UNKNOWN_ITEM, type ItemSettings } from "../../shared/privacy";
import { settingsFromRow, type SettingsColumns } from "../privacy/item-settings";
import { byCountDatabase } from "./count-databases";
import { d1 } from "./d1";
import { metrics } from "../../metrics/recorder";
import { withDeadline } from "../../shared/deadline";
import { centralReader } from "../pipeline/central-tables";

/** BatchGetItem takes at most 100 keys a request; a feed asks for at most 100 items. */
const CENTRAL_BATCH_KEYS = 100;

/**
 * An item's row in the regional store: its counts, the snapshot's sequence,
 * when the aggregator wrote it (`asOf`) and when the head took the counts
 * (`countedAt`, 0 when the snapshot did not say).
 */
export type StoredCounts = { counts: Counts; seq: number; asOf: number; countedAt: number };

type CountColumns = {
  kind: "c" | "s";
  likes: number;
  views: number;
  shares: number;
  saves: number;
  seq: number;
  updated_at: number;
  counted_at: number;
};
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
  SELECT 'c' AS kind, item_type, item_id, likes, views, shares, saves, seq, updated_at, counted_at, NULL AS owner_id, NULL AS visibility, NULL AS hide_counts
    FROM item_counts WHERE (item_type, item_id) IN (SELECT item_type, item_id FROM wanted)
  UNION ALL
  SELECT 's', item_type, item_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, owner_id, visibility, hide_counts
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

/** A feed's store round trips stay at most this many, whatever the number of count databases (docs/reads.md). */
export const MAX_ROUND_TRIPS = 2;

/** What one read cost: requests to each store. */
type Trips = { d1: number; central: number };

/**
 * The stored counts of many items, in at most MAX_ROUND_TRIPS store round
 * trips: when they fall in that many count databases or fewer, one query to
 * each (in parallel, each bounded by `timeoutMs`); when they are spread over
 * more, one BatchGetItem to the central store, which holds every item's
 * counts and settings, and one more for the keys it left unprocessed. What
 * the central store could not answer (it is off, down, slow, or left keys
 * twice) falls back to the databases: more round trips, the same answer. A
 * database that fails fails only its own items.
 */
export async function readStoredCounts(env: Env, items: readonly string[], caller: string, timeoutMs: number): Promise<StoreRead> {
  const read: StoreRead = { found: new Map(), settings: new Map(), failed: [] };
  const trips: Trips = { d1: 0, central: 0 };
  let groups = [...byCountDatabase(env, items, (item) => item)];
  if (groups.length > MAX_ROUND_TRIPS) {
    const left = await readCentral(env, items, timeoutMs, read, trips);
    groups = [...byCountDatabase(env, left, (item) => item)];
  }
  await Promise.all(groups.map(([db, group]) => readDatabase(env, db, group, caller, timeoutMs, read, trips)));
  if (trips.d1 > 0) metrics.count("store_round_trips_total", { caller, store: "d1" }, trips.d1);
  if (trips.central > 0) metrics.count("store_round_trips_total", { caller, store: "central" }, trips.central);
  metrics.count("store_reads_total", { caller, round_trips: String(trips.d1 + trips.central) });
  return read;
}

async function readDatabase(env: Env, db: D1Database, group: string[], caller: string, timeoutMs: number, read: StoreRead, trips: Trips): Promise<void> {
  trips.d1++;
  try {
    const pairs = JSON.stringify(group.map(splitItem));
    const rows = await d1(env, db, caller, timeoutMs).all<Row>(db.prepare(SELECT).bind(pairs));
    for (const row of rows) {
      const key = `${row.item_type}:${row.item_id}`;
      if (row.kind === "c") read.found.set(key, fromRow(row));
      else read.settings.set(key, settingsFromRow(row));
    }
    for (const key of group) if (!read.settings.has(key)) read.settings.set(key, UNKNOWN_ITEM);
  } catch {
    read.failed.push(...group);
  }
}

/** Reads what it can from the central store in at most MAX_ROUND_TRIPS requests; answers the items it could not. */
async function readCentral(env: Env, items: readonly string[], timeoutMs: number, read: StoreRead, trips: Trips): Promise<string[]> {
  const store = centralReader(env);
  if (!store) return [...items];
  let left = [...items];
  try {
    while (left.length > 0 && trips.central < MAX_ROUND_TRIPS) {
      trips.central++;
      const asked = left.slice(0, CENTRAL_BATCH_KEYS);
      const { rows, unprocessed } = await withDeadline(store.readFeed(asked), timeoutMs, "central store feed read");
      const skipped = new Set(unprocessed);
      const now = Date.now();
      for (const item of asked) {
        if (skipped.has(item)) continue;
        const row = rows.get(item);
        if (row?.counts) read.found.set(item, { ...row.counts, asOf: row.counts.countedAt || now });
        read.settings.set(item, row?.settings ?? UNKNOWN_ITEM);
      }
      left = [...unprocessed, ...left.slice(CENTRAL_BATCH_KEYS)];
    }
  } catch {
    // The central store failed or was slow: the databases answer for what it did not.
  }
  return left;
}

function fromRow(row: Row): StoredCounts {
  return { counts: { likes: row.likes, views: row.views, shares: row.shares, saves: row.saves }, seq: row.seq, asOf: row.updated_at, countedAt: row.counted_at };
}
