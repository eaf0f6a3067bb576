import { isNewer, type EdgeChange } from "../../shared/edges";

/** The edges table of an item's head and of its children: one row per (user, counter). */
export const EDGES_TABLE = `
  CREATE TABLE edges (
    user    TEXT    NOT NULL,
    counter TEXT    NOT NULL,
    state   INTEGER NOT NULL,
    inc     INTEGER NOT NULL,
    seq     INTEGER NOT NULL,
    PRIMARY KEY (user, counter)
  ) WITHOUT ROWID;
`;

export function hasEdge(sql: SqlStorage, user: string, counter: string): boolean {
  return sql.exec("SELECT 1 FROM edges WHERE user = ? AND counter = ?", user, counter).toArray().length > 0;
}

/**
 * Stores the change if it is newer than the edge's version and returns the
 * count delta (-1, 0 or +1). An older or repeated change is a no-op, which is
 * what makes every delivery path (retries, redelivery, reordering) safe.
 */
export function applyEdge(sql: SqlStorage, change: EdgeChange): number {
  const current = sql
    .exec<{ state: number; inc: number; seq: number }>(
      "SELECT state, inc, seq FROM edges WHERE user = ? AND counter = ?",
      change.user,
      change.counter,
    )
    .toArray()[0];
  if (current && !isNewer(change, current)) return 0;
  sql.exec(
    `INSERT INTO edges (user, counter, state, inc, seq) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (user, counter) DO UPDATE SET state = excluded.state, inc = excluded.inc, seq = excluded.seq`,
    change.user,
    change.counter,
    change.state,
    change.inc,
    change.seq,
  );
  return change.state - (current?.state ?? 0);
}
