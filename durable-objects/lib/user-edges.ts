import type { ToggleCounter } from "../../shared/counters";
import type { ImportedEdge, ImportOutcome } from "../../shared/contracts";
import type { Sql } from "./metered-storage";

/** One changed edge of a user object, as its edges table holds it. */
export type UserEdgeChange = { item: string; counter: ToggleCounter; state: 0 | 1; inc: number; seq: number; at: number; home: number };

/**
 * Inside the user object's transaction: records when the user last acted on
 * an edge (`acted_at`), whether or not its state changed, so a request asked
 * earlier (a pending intent applied late) never overrides it (I6). An edge
 * the user never had is remembered in state 0.
 */
export function recordAction(sql: Sql, edge: { item: string; counter: ToggleCounter; inc: number; seq: number; home: number }, actedAt: number): void {
  sql.exec(
    `INSERT INTO edges (item, counter, state, inc, seq, home, acted_at) VALUES (?, ?, 0, ?, ?, ?, ?)
     ON CONFLICT (item, counter) DO UPDATE SET acted_at = max(acted_at, excluded.acted_at)`,
    edge.item,
    edge.counter,
    edge.inc,
    edge.seq,
    edge.home,
    actedAt,
  );
}

/**
 * Inside the user object's transaction: the edge's new state, which is what
 * its delivery sends (the caller puts the edge in the outbox, in the same
 * commit). `home` is used only for a new edge: an existing edge keeps its
 * home whatever the item's state now.
 */
export function writeUserEdge(sql: Sql, change: UserEdgeChange): void {
  const { item, counter, state, inc, seq, at, home } = change;
  sql.exec(
    `INSERT INTO edges (item, counter, state, inc, seq, home, at, acted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?7)
     ON CONFLICT (item, counter) DO UPDATE SET state = excluded.state, inc = excluded.inc, seq = excluded.seq, at = excluded.at,
       acted_at = max(acted_at, excluded.acted_at)`,
    item,
    counter,
    state,
    inc,
    seq,
    home,
    at,
  );
}

/**
 * Inside the user object's transaction: edges brought from another system
 * (invariant I6). Each carries its target state and its time, never a
 * toggle: it applies only when no action of this user on this item is as new
 * (a live like after the import's time wins), and as a live like does (the
 * caller puts the changed edges in the outbox), so the item side and the
 * stores follow.
 * A state that is already current changes nothing. An unlike of an edge the
 * user never had is remembered (state 0, its time), and not delivered, so an
 * older imported like of it cannot apply later.
 */
export function applyImports(
  sql: Sql,
  edges: readonly ImportedEdge[],
  version: { inc: number; seq: number },
  homeOf: (item: string) => number,
): { outcomes: ImportOutcome[]; seq: number; changed: string[] } {
  let seq = version.seq;
  const changed: string[] = [];
  const outcomes = edges.map((edge): ImportOutcome => {
    const current = sql
      .exec<{ state: number; at: number }>("SELECT state, at FROM edges WHERE item = ? AND counter = 'likes'", edge.item)
      .toArray()[0];
    const want = edge.on ? 1 : 0;
    if (current && current.at >= edge.at) return current.state === want ? "duplicate" : "superseded";
    if ((current?.state ?? 0) === want) {
      if (!current) sql.exec("INSERT INTO edges (item, counter, state, inc, seq, home, at) VALUES (?, 'likes', 0, ?, 0, -1, ?)", edge.item, version.inc, edge.at);
      return "duplicate";
    }
    seq++;
    writeUserEdge(sql, { item: edge.item, counter: "likes", state: want, inc: version.inc, seq, at: edge.at, home: homeOf(edge.item) });
    changed.push(edge.item);
    return "applied";
  });
  return { outcomes, seq, changed };
}
