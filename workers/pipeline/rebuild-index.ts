import type { RebuildCursor } from "../../shared/rebuild";
import { indexDatabaseFor, userIndexDatabaseFor } from "../stores/count-databases";
import { countLayout, layoutDatabases } from "../stores/count-layout";
import type { CentralStore } from "../stores/central-store";
import { countedItemsAfter, writeSnapshots } from "../stores/item-counts";
import { REBUILD_CALLER, type Tally } from "./rebuild-counts";

type Next = RebuildCursor | null;

/** Index rows for `keys` (items or users), each in the database that holds it; tallies rows written and already there. */
async function writeIndexRows(env: Env, kind: "items" | "users", keys: readonly string[], tally: Tally): Promise<void> {
  const groups = Map.groupBy(keys, (key) => (kind === "items" ? indexDatabaseFor(env, key) : userIndexDatabaseFor(env, key)));
  await Promise.all(
    [...groups].map(async ([db, group]) => {
      try {
        const written = await writeSnapshots(env, db, new Map(), { items: kind === "items" ? group : [], users: kind === "users" ? group : [] }, Date.now(), REBUILD_CALLER);
        tally.written += written;
        tally.unchanged += group.length - written;
      } catch (error) {
        for (const key of group) tally.failed.push({ key: kind === "items" ? key : `user:${key}`, error: String(error) });
      }
    }),
  );
  tally.checked += keys.length;
}

/**
 * The databases that hold count rows: those of the count layout (both
 * layouts' while a reshard runs), not COUNT_DATABASES, which a reshard leaves behind.
 */
export async function countedDatabases(env: Env): Promise<D1Database[]> {
  return layoutDatabases(env, await countLayout(env));
}

/**
 * One page of the index backfill from count database `db`'s rows, after the
 * item `after` in key order: every item with a count row gets its index row
 * (an item counted before the index existed, or an index restored from an
 * old backup). Then the next database, then the users' scan.
 */
export async function backfillItemIndex(env: Env, db: number, after: string, limit: number, central: CentralStore | null, tally: Tally): Promise<Next> {
  const databases = await countedDatabases(env);
  const items = await countedItemsAfter(env, databases[db]!, after, limit, REBUILD_CALLER);
  await writeIndexRows(env, "items", items, tally);
  if (items.length === limit) return { phase: "counted", db, key: items[items.length - 1]! };
  if (db + 1 < databases.length) return { phase: "counted", db: db + 1, key: "" };
  return central ? { phase: "scan", scanned: 0 } : null;
}

/**
 * One page of the index of users' backfill, from a scan of the central
 * store's user-to-items table (the only place that lists users, objects
 * cannot be listed): each user seen gets its index row.
 */
export async function backfillUserIndex(
  env: Env,
  central: CentralStore,
  cursor: Extract<RebuildCursor, { phase: "scan" }>,
  limit: number,
  tally: Tally,
): Promise<Next> {
  const page = await central.scanUsers(cursor.after, limit);
  await writeIndexRows(env, "users", page.users, tally);
  return page.after ? { phase: "scan", after: page.after, scanned: cursor.scanned + limit } : null;
}
