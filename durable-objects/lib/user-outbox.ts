import type { ToggleCounter } from "../../shared/counters";
import { OUTBOX_SWEEP_MS } from "../../shared/object-windows";
import type { MeteredStorage } from "./metered-storage";

/** One of the user's edges, by its key. */
export type EdgeRef = { item: string; counter: ToggleCounter };
/** An edge's change as the edges table holds it: what a delivery sends. */
export type DueChange = { state: 0 | 1; inc: number; seq: number; at: number; home: number };

type Version = { inc: number; seq: number };

/** One key per edge: the outbox's acknowledgements and the object's per-edge delivery locks. */
export const keyOf = (edge: EdgeRef) => `${edge.item}\u0000${edge.counter}`;

/**
 * The user's outbox (I3): the edges whose newest change the item side may
 * not have acknowledged, as a list in the user object's one state row. Every
 * change rewrites that row anyway (its version sequence and limiter), so a
 * change enters the outbox at no row written. What is sent is the edge row's
 * newest state: a change overtaken before its delivery is never sent, and
 * the item side, which applies only newer versions, ends in the same state
 * as if it had been.
 *
 * Acknowledgements are kept in memory until the sweep (or a request that
 * changed nothing, which writes the row anyway) stores the list without
 * them; a like's own commit only adds to the list, so it reads no edge to
 * find what was acknowledged. A crash in between only costs a redelivery,
 * which the item side refuses as not newer.
 *
 * The list is read several times a like (the commit, the delivery, the
 * alarm's checks) and the object writes it only through `next` and
 * `swept`, so the parsed list is kept between writes; a commit that rolls
 * back drops it, and the next read takes it from the row again.
 */
export class UserOutbox {
  /** Acknowledged changes, by edge, not yet taken out of the stored list. */
  readonly #delivered = new Map<string, Version>();
  /** The stored list as last read or written (inside an open commit: as that commit leaves it); null: read the row. */
  #list: readonly EdgeRef[] | null = null;

  constructor(private readonly storage: MeteredStorage) {}

  /**
   * The edges left to deliver when the stored list also holds some with
   * nothing left, which `swept` would take out (pass it the result: one read
   * of the list, not two); null when every listed edge still waits.
   */
  undeliveredIfStale(): EdgeRef[] | null {
    if (this.stored().length === 0) return null;
    const left = this.undelivered();
    return left.length < this.stored().length ? left : null;
  }

  /** The stored list: every edge with a change not yet known to be stored as delivered. */
  stored(): readonly EdgeRef[] {
    if (this.#list === null) {
      const row = this.storage.sql.exec<{ outbox: string }>("SELECT outbox FROM state").toArray()[0];
      this.#list = row ? (JSON.parse(row.outbox) as [string, ToggleCounter][]).map(([item, counter]) => ({ item, counter })) : [];
    }
    return this.#list;
  }

  /**
   * Inside the commit of a change that writes the state row: the stored list
   * with `changed` added. Acknowledged edges stay listed, their marks in
   * memory, for the sweep's `swept` to take out, so a like's commit reads no
   * edge for them: but only while the sweep is due within OUTBOX_SWEEP_MS
   * (`sweepAt`, the object's alarm; null: this commit sets it), for an
   * alarm a failed delivery's backoff holds later would keep them where an
   * eviction loses them, each then a redelivery; and only while the list
   * stays within LISTED_BEFORE_SWEEP. Otherwise this commit sweeps.
   */
  next(changed: readonly EdgeRef[], now: number, sweepAt: number | null): string {
    const edges = [...this.stored(), ...changed];
    const sweepSoon = sweepAt === null || sweepAt <= now + OUTBOX_SWEEP_MS;
    const long = edges.length > LISTED_BEFORE_SWEEP && new Set(edges.map(keyOf)).size > LISTED_BEFORE_SWEEP;
    if (!sweepSoon || long) return this.swept(changed);
    return this.#store(edges);
  }

  /**
   * Inside the commit that writes the state row: the list with only the
   * edges left to deliver, `changed` added (acknowledged edges, and edges
   * since dropped, are out). This is where delivered marks become durable.
   * `left` is `undelivered()` when the caller read it just before, in the
   * same synchronous step.
   */
  swept(changed: readonly EdgeRef[] = [], left: readonly EdgeRef[] = this.undelivered()): string {
    const edges = [...left, ...changed];
    const marks = new Map(this.#delivered);
    this.#delivered.clear();
    return this.#store(edges, marks);
  }

  /** The list as this commit leaves it; should the commit roll back, the row is read again and `marks` (taken out by `swept`) come back. */
  #store(edges: readonly EdgeRef[], marks?: ReadonlyMap<string, Version>): string {
    this.storage.onRollback(this, () => {
      this.#list = null;
      for (const [key, version] of marks ?? []) if (!this.#delivered.has(key)) this.#delivered.set(key, version);
    });
    const list = [...new Map(edges.map((edge) => [keyOf(edge), edge])).values()];
    this.#list = list;
    return JSON.stringify(list.map((edge) => [edge.item, edge.counter]));
  }

  /** What a delivery of the edge sends: null when the item side already has its newest change. */
  due(edge: EdgeRef): DueChange | null {
    const listed = this.stored().some((other) => other.item === edge.item && other.counter === edge.counter);
    return listed ? this.#unacknowledged(edge) : null;
  }

  /** The item side applied this change of the edge. */
  delivered(edge: EdgeRef, version: Version): void {
    this.#delivered.set(keyOf(edge), { inc: version.inc, seq: version.seq });
  }

  /**
   * The edges whose newest change the item side has not acknowledged. The
   * list's edges are read by item in one statement, not one each, its items
   * bound as one JSON array: so the statement's text, and the runtime's
   * prepared statement, is the same however long the list. An item's other
   * counter comes along, a row read and left.
   */
  undelivered(): EdgeRef[] {
    const stored = this.stored();
    if (stored.length === 0) return [];
    const items = JSON.stringify([...new Set(stored.map((edge) => edge.item))]);
    const versions = new Map<string, Version>();
    for (const row of this.storage.sql.exec<EdgeRef & Version>(LISTED_VERSIONS, items)) versions.set(keyOf(row), row);
    return stored.filter((edge) => {
      const version = versions.get(keyOf(edge));
      return version !== undefined && !this.#acknowledged(edge, version);
    });
  }

  /** The edge's stored change, unless the item side acknowledged that very version (null too for an edge since dropped). */
  #unacknowledged(edge: EdgeRef): DueChange | null {
    const row = this.storage.sql
      .exec<DueChange>("SELECT state, inc, seq, at, home FROM edges WHERE item = ? AND counter = ?", edge.item, edge.counter)
      .toArray()[0];
    return row && !this.#acknowledged(edge, row) ? row : null;
  }

  #acknowledged(edge: EdgeRef, version: Version): boolean {
    const acked = this.#delivered.get(keyOf(edge));
    return acked !== undefined && acked.inc === version.inc && acked.seq === version.seq;
  }
}

/**
 * Listed edges past which a change's commit takes the acknowledged ones out
 * itself (one read of the listed edges), not leaving them for the sweep: so
 * a user liking faster than the limits allow people, or an import, keeps a
 * short state row and a short list to write with each change.
 */
const LISTED_BEFORE_SWEEP = 100;

/** The versions of the listed edges' items, bound as one JSON array. */
const LISTED_VERSIONS = "SELECT item, counter, inc, seq FROM edges WHERE item IN (SELECT value FROM json_each(?))";
