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
 * The user's last action on an edge: its state and `acted_at`, the one clock
 * every late action is compared with (I6): a toggle, a kept intent, an
 * imported edge, an unlike of an edge the user never had. An edge stored
 * before edges kept `acted_at` holds 0 there, so its `at` stands in.
 */
export function lastAction(sql: Sql, item: string, counter: ToggleCounter): { state: 0 | 1; actedAt: number } | null {
  const row = sql
    .exec<{ state: 0 | 1; acted_at: number }>("SELECT state, max(acted_at, at) AS acted_at FROM edges WHERE item = ? AND counter = ?", item, counter)
    .toArray()[0];
  return row ? { state: row.state, actedAt: row.acted_at } : null;
}

/**
 * Whether an imported edge is late: the user's last action on the item is
 * newer, or as new and not an imported unlike of a like. At an equal time the
 * unlike wins whichever comes first, so a file's answer does not depend on
 * the order of its lines (a live request at an equal time arrived after the
 * action it meets, and applies).
 */
function importIsLate(last: { state: 0 | 1; actedAt: number } | null, edge: ImportedEdge): boolean {
  if (!last) return false;
  return last.actedAt > edge.at || (last.actedAt === edge.at && !(last.state === 1 && !edge.on));
}

/**
 * Inside the user object's transaction: edges brought from another system
 * (invariant I6). Each carries its target state and its time, never a
 * toggle, and is compared with the user's last action on the item
 * (`lastAction`): a late edge changes nothing (`duplicate` when the state is
 * the same, `superseded` when not); a newer edge in the state already held
 * records its time (`duplicate`), so an older edge after it stays late; a
 * newer edge of the other state applies as a live like does (the caller puts
 * the changed edges in the outbox), so the item side and the stores follow.
 * An unlike of an edge the user never had is remembered (state 0, its time)
 * and not delivered. A batch is applied in time order (an unlike after a like
 * of the same time), so its outcomes and the edge's `at` do not depend on the
 * order of its lines; the outcomes are answered in the order asked.
 */
export function applyImports(
  sql: Sql,
  edges: readonly ImportedEdge[],
  version: { inc: number; seq: number },
  homeOf: (item: string) => number,
): { outcomes: ImportOutcome[]; seq: number; changed: string[] } {
  let seq = version.seq;
  const changed = new Set<string>();
  const outcomes = new Array<ImportOutcome>(edges.length);
  const inTimeOrder = edges.map((edge, index) => ({ edge, index })).sort((a, b) => a.edge.at - b.edge.at || Number(b.edge.on) - Number(a.edge.on));
  for (const { edge, index } of inTimeOrder) {
    const last = lastAction(sql, edge.item, "likes");
    const want = edge.on ? 1 : 0;
    const same = (last?.state ?? 0) === want;
    if (importIsLate(last, edge)) {
      outcomes[index] = same ? "duplicate" : "superseded";
      continue;
    }
    if (same) {
      recordAction(sql, { item: edge.item, counter: "likes", inc: version.inc, seq: 0, home: homeOf(edge.item) }, edge.at);
      outcomes[index] = "duplicate";
      continue;
    }
    seq++;
    writeUserEdge(sql, { item: edge.item, counter: "likes", state: want, inc: version.inc, seq, at: edge.at, home: homeOf(edge.item) });
    changed.add(edge.item);
    outcomes[index] = "applied";
  }
  return { outcomes, seq, changed: [...changed] };
}
