import { isNewer, type EdgeChange } from "../../shared/edges";
import type { Emitter } from "./emitter";
import type { Sql } from "./metered-storage";

/**
 * The edges table of an item's head and of its children, one row per (user,
 * counter): user TEXT, counter TEXT, state, inc, seq, at (each object's
 * migrations create it, literally). The head's rows also carry `moved`: the
 * child an edge was handed over to, NULL while the head holds it.
 */
export function hasEdge(sql: Sql, user: string, counter: string): boolean {
  return sql.exec("SELECT 1 FROM edges WHERE user = ? AND counter = ?", user, counter).toArray().length > 0;
}

/** An edge's stored version and state: what a change must be newer than. */
export type StoredEdge = { state: number; inc: number; seq: number };

function storedEdge(sql: Sql, user: string, counter: string): StoredEdge | null {
  return sql.exec<StoredEdge>("SELECT state, inc, seq FROM edges WHERE user = ? AND counter = ?", user, counter).toArray()[0] ?? null;
}

/**
 * Stores the change if it is newer than the edge's version and returns the
 * count delta (-1, 0 or +1), or null when the change was not newer and
 * nothing was written. An older or repeated change is a no-op, which is what
 * makes every delivery path (retries, redelivery, reordering) safe.
 * `current` is the edge's row (null: none) when the caller read it in the
 * same transaction and nothing has written the edge since; else it is read.
 */
export function applyEdge(sql: Sql, change: EdgeChange, current: StoredEdge | null = storedEdge(sql, change.user, change.counter)): number | null {
  if (current && !isNewer(change, current)) return null;
  sql.exec(
    `INSERT INTO edges (user, counter, state, inc, seq, at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (user, counter) DO UPDATE SET state = excluded.state, inc = excluded.inc, seq = excluded.seq, at = excluded.at`,
    change.user,
    change.counter,
    change.state,
    change.inc,
    change.seq,
    change.at,
  );
  return change.state - (current?.state ?? 0);
}

/**
 * A removed user's edge, dropped (lib/removal.ts): once its unlike is here
 * and its emission acknowledged, so the stores have the unlike before the
 * row goes; false while either is still to come. A head's row for an edge
 * handed over (`moved`, with `hasMoved`) is only the head's marker and goes
 * too. Inside the object's transaction.
 */
export function forgetEdge(sql: Sql, emitter: Pick<Emitter, "holds">, user: string, counter: string, hasMoved: boolean): boolean {
  if (emitter.holds(user, counter)) return false;
  const row = sql
    .exec<{ state: number; moved: number | null }>(`SELECT state, ${hasMoved ? "moved" : "NULL AS moved"} FROM edges WHERE user = ? AND counter = ?`, user, counter)
    .toArray()[0];
  if (!row) return true;
  if (row.state === 1 && row.moved === null) return false;
  sql.exec("DELETE FROM edges WHERE user = ? AND counter = ?", user, counter);
  return true;
}
