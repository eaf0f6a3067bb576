import type { Counts } from "../../shared/counters";
import type { CountSnapshot } from "../../shared/emissions";
import { indexDraw, userIndexDraw } from "../../shared/item-index";
import { UNKNOWN_ITEM, type ItemSettings } from "../../shared/privacy";
import { readIndexes, type CountLayout } from "../../shared/count-layout";
import { countLayout, groupByIndexes, layoutDatabases } from "./count-layout";
import { d1, type QueryPath } from "./d1";
import { splitItem } from "./item-key";
import { settingsFromRow, type SettingsColumns } from "./item-settings";
import { readCentralRows, type Trips } from "./central-feed";
import { metrics } from "../../metrics/recorder";

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

/**
 * The longest `readCountRows` waits on the stores, each trip under
 * `timeoutMs`: up to MAX_ROUND_TRIPS central-store trips, one after the
 * other, then one round of D1 queries (in parallel) for what those left.
 */
export function longestReadMs(timeoutMs: number): number {
  return (MAX_ROUND_TRIPS + 1) * timeoutMs;
}

/** An empty read and the count layout; when DB cannot say the layout, every item asked is failed, none read from a guessed database. */
async function startRead(env: Env, items: readonly string[]): Promise<{ read: StoreRead; layout: CountLayout | null }> {
  const read: StoreRead = { found: new Map(), settings: new Map(), failed: [] };
  const layout = await countLayout(env).catch(() => null);
  if (!layout) read.failed.push(...items);
  return { read, layout };
}

/**
 * The stored counts of many items, in at most MAX_ROUND_TRIPS store round
 * trips: when they fall in that many count databases or fewer, one query to
 * each (in parallel, each bounded by `timeoutMs`); when they are spread over
 * more, the central store's batch read (readCentralRows), which holds every
 * item's counts and settings. What the central store could not answer (it is
 * off, down, slow, or left keys twice) falls back to the databases: more
 * round trips, the same answer. A database that fails fails only its own items.
 * The databases are those of the count layout: while a reshard copies or verifies, an
 * item that moves is read from both of its databases (the newest row wins),
 * and those count toward the bound like any other.
 */
export async function readCountRows(env: Env, items: readonly string[], caller: string, timeoutMs: number, path?: QueryPath): Promise<StoreRead> {
  const { read, layout } = await startRead(env, items);
  if (!layout) return read;
  const trips: Trips = { d1: 0, central: 0 };
  const where = (item: string) => readIndexes(layout, item);
  let groups = [...groupByIndexes(env, items, where)];
  if (groups.length > MAX_ROUND_TRIPS) {
    const left = await readCentralRows(env, items, timeoutMs, read, trips, MAX_ROUND_TRIPS);
    groups = [...groupByIndexes(env, left, where)];
  }
  const failed = new Set<string>();
  await Promise.all(groups.map(([db, group]) => readDatabase(env, db, group, caller, timeoutMs, read, failed, trips, path)));
  // An item one of its databases could not answer for is failed whatever the other held: that one may lack its row.
  for (const [, group] of groups) for (const key of group) if (!failed.has(key) && !read.settings.has(key)) read.settings.set(key, UNKNOWN_ITEM);
  for (const key of failed) {
    read.found.delete(key);
    read.settings.delete(key);
    read.failed.push(key);
  }
  if (trips.d1 > 0) metrics.count("store_round_trips_total", { caller, store: "d1" }, trips.d1);
  if (trips.central > 0) metrics.count("store_round_trips_total", { caller, store: "central" }, trips.central);
  metrics.count("store_reads_total", { caller, round_trips: String(trips.d1 + trips.central) });
  return read;
}

/**
 * The stored counts of many items from D1 alone, one query per count
 * database they fall in (reconciliation compares D1 itself, so no read may
 * be answered by the central store instead).
 */
export async function readD1Rows(env: Env, items: readonly string[], caller: string, timeoutMs: number): Promise<StoreRead> {
  const { read, layout } = await startRead(env, items);
  if (!layout) return read;
  const trips: Trips = { d1: 0, central: 0 };
  const failed = new Set<string>();
  const groups = [...groupByIndexes(env, items, (item: string) => readIndexes(layout, item))];
  await Promise.all(groups.map(([db, group]) => readDatabase(env, db, group, caller, timeoutMs, read, failed, trips)));
  for (const key of failed) {
    read.found.delete(key);
    read.failed.push(key);
  }
  return read;
}

/**
 * The newest D1 bookmark this isolate has seen per database. A feed's query
 * runs in a session (the Sessions API) that starts from it: any read replica
 * may answer, but never one older than what this isolate already served, so
 * counts never step back when consecutive reads land on different replicas.
 */
const bookmarks = new WeakMap<D1Database, string>();

/** The newest bookmark this isolate's feed reads have seen from a database (none before its first read). */
export function readBookmark(db: D1Database): string | undefined {
  return bookmarks.get(db);
}

function keepBookmark(db: D1Database, bookmark: string | null): void {
  const known = bookmarks.get(db);
  // Bookmarks sort in time order.
  if (bookmark && (known === undefined || known < bookmark)) bookmarks.set(db, bookmark);
}

async function readDatabase(
  env: Env,
  db: D1Database,
  group: string[],
  caller: string,
  timeoutMs: number,
  read: StoreRead,
  failed: Set<string>,
  trips: Trips,
  path?: QueryPath,
): Promise<void> {
  trips.d1++;
  try {
    const pairs = JSON.stringify(group.map(splitItem));
    const session = db.withSession(bookmarks.get(db) ?? "first-unconstrained");
    const rows = await d1(env, db, caller, timeoutMs, path).all<Row>(session.prepare(SELECT).bind(pairs));
    keepBookmark(db, session.getBookmark());
    for (const row of rows) {
      const key = `${row.item_type}:${row.item_id}`;
      if (row.kind === "c") {
        const known = read.found.get(key);
        if (!known || row.seq > known.seq) read.found.set(key, fromRow(row));
      } else read.settings.set(key, settingsFromRow(row));
    }
  } catch {
    for (const key of group) failed.add(key);
  }
}

function fromRow(row: Row): StoredCounts {
  return { counts: { likes: row.likes, views: row.views, shares: row.shares, saves: row.saves }, seq: row.seq, asOf: row.updated_at, countedAt: row.counted_at };
}

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
 * The statements of one database's share of a batch: the snapshots of the
 * items it holds the counts of, and the index rows it holds (items by
 * default: those of the snapshots). A snapshot no newer than the stored
 * one, or an index row already there, changes no row.
 */
export function snapshotWrites(db: D1Database, snapshots: ReadonlyMap<string, CountSnapshot>, index: IndexRows = {}, now = Date.now()): D1PreparedStatement[] {
  const upsert = db.prepare(UPSERT);
  const items = db.prepare(INDEX);
  const users = db.prepare(USER_INDEX);
  return [
    ...[...snapshots].map(([item, { seq, counts, at }]) =>
      upsert.bind(...splitItem(item), counts.likes, counts.views, counts.shares, counts.saves, seq, now, at ?? 0),
    ),
    ...(index.items ?? [...snapshots.keys()]).map((item) => items.bind(indexDraw(item), item)),
    ...(index.users ?? []).map((user) => users.bind(userIndexDraw(user), user)),
  ];
}

/** Writes one database's share (`snapshotWrites`) in one `batch()`, one transaction, counted under `caller`; answers how many rows it changed. */
export async function writeSnapshots(
  env: Env,
  db: D1Database,
  snapshots: ReadonlyMap<string, CountSnapshot>,
  index: IndexRows,
  now: number,
  caller: string,
): Promise<number> {
  const results = await d1(env, db, caller).batch(snapshotWrites(db, snapshots, index, now));
  return results.reduce((sum, result) => sum + (result.meta.changes ?? 0), 0);
}

/** Items whose counts were stored most recently, newest first, over every count database. */
export async function recentItems(env: Env, since: number, limit: number): Promise<string[]> {
  const perDatabase = await Promise.all(
    layoutDatabases(env, await countLayout(env)).map((db) =>
      d1(env, db, "reconcile").all<{ item_type: string; item_id: string; updated_at: number }>(
        db.prepare("SELECT item_type, item_id, updated_at FROM item_counts WHERE updated_at >= ? ORDER BY updated_at DESC LIMIT ?").bind(since, limit),
      ),
    ),
  );
  const newest = perDatabase.flat().sort((a, b) => b.updated_at - a.updated_at);
  return [...new Set(newest.map((row) => `${row.item_type}:${row.item_id}`))].slice(0, limit);
}

/** The next `limit` items with a count row in database `db`, after `after` in key order ("" for the first page). */
export async function countedItemsAfter(env: Env, db: D1Database, after: string, limit: number, caller: string): Promise<string[]> {
  const [type, id] = after === "" ? ["", ""] : splitItem(after);
  const rows = await d1(env, db, caller).all<{ item_type: string; item_id: string }>(
    db.prepare("SELECT item_type, item_id FROM item_counts WHERE (item_type, item_id) > (?, ?) ORDER BY item_type, item_id LIMIT ?").bind(type, id, limit),
  );
  return rows.map((row) => `${row.item_type}:${row.item_id}`);
}
