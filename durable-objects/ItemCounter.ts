import { DurableObject } from "cloudflare:workers";
import { COUNTER_TYPES, zeroCounts, type Counts, type EventCounter } from "../shared/counters";
import { isNewer, type EdgeChange } from "../shared/edges";
import { SqlSchema, type Migration } from "./lib/sql-schema";

const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    sql: `
      CREATE TABLE edges (
        user    TEXT    NOT NULL,
        counter TEXT    NOT NULL,
        state   INTEGER NOT NULL,
        inc     INTEGER NOT NULL,
        seq     INTEGER NOT NULL,
        PRIMARY KEY (user, counter)
      ) WITHOUT ROWID;
      CREATE TABLE counts (counter TEXT PRIMARY KEY, value INTEGER NOT NULL);
      CREATE TABLE meta (key TEXT PRIMARY KEY, value);
    `,
  },
  {
    id: 2,
    sql: `
      CREATE TABLE idempotency_keys (key TEXT PRIMARY KEY, expires_at INTEGER NOT NULL) WITHOUT ROWID;
      CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
    `,
  },
];

type PendingApply = { changes: readonly EdgeChange[]; resolve: (counts: Counts) => void; reject: (error: unknown) => void };

export type ItemSnapshot = { counts: Counts; asOf: number };

/** Event counts gathered by one Worker isolate since its last flush. */
export type EventBatch = {
  counts: Partial<Record<EventCounter, number>>;
  /** Events sent with an Idempotency-Key: each counts once per key within 24 hours. */
  keyed: readonly { counter: EventCounter; key: string }[];
};

/** Views and shares are persisted at most this often: one commit for many events. */
const EVENT_PERSIST_MS = 250;
const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** Expired idempotency keys are pruned a bounded number at a time, inside commits that happen anyway. */
const PRUNE_BATCH = 500;

/**
 * One item's counts and the (user, version, state) edges behind them.
 *
 * Invariant: for each toggle counter (likes, saves), the count equals the
 * number of edges in state 1, and an edge only moves to a strictly newer
 * version. So a change delivered twice, late or out of order is a no-op, and
 * no count can go negative. Count and edge are written in the same transaction.
 *
 * Event counters (views, shares) are plain sums. They are held in memory and
 * persisted at most every EVENT_PERSIST_MS (or with the next edge commit): a
 * crash may lose that last fraction of a second of views, a trade-off likes
 * and saves never take.
 */
export class ItemCounter extends DurableObject<Env> {
  /** Test hooks: the next N apply batches or reads throw, as a failing item side would. */
  readonly faults = { applyFailures: 0, readFailures: 0 };
  /** Calls this object has served since it started, for tests and metrics. */
  readonly stats = { reads: 0, applies: 0, eventBatches: 0, commits: 0 };

  readonly #schema: SqlSchema;
  /** The live counts, including events not yet persisted. */
  #counts: Counts = zeroCounts();
  #dirty = new Set<EventCounter>();
  #pendingKeys = new Map<string, number>();
  #pendingApplies: PendingApply[] = [];
  #applyScheduled = false;
  #eventPersistScheduled = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#schema = new SqlSchema(ctx.storage, MIGRATIONS);
    if (this.#schema.ready) {
      for (const row of ctx.storage.sql.exec<{ counter: string; value: number }>("SELECT counter, value FROM counts")) {
        if ((COUNTER_TYPES as readonly string[]).includes(row.counter)) this.#counts[row.counter as keyof Counts] = row.value;
      }
    }
  }

  /**
   * Applies edge changes and resolves with the counts after them. Concurrent
   * calls are coalesced into one transaction (one storage commit), because a
   * commit, not the work inside it, is what limits an object's write rate.
   */
  async apply(changes: readonly EdgeChange[]): Promise<Counts> {
    this.stats.applies++;
    return await new Promise((resolve, reject) => {
      this.#pendingApplies.push({ changes, resolve, reject });
      if (!this.#applyScheduled) {
        this.#applyScheduled = true;
        setTimeout(() => this.#commitApplies(), 0);
      }
    });
  }

  /** Adds a Worker isolate's views and shares; persisted in a batch shortly after. */
  addEvents(batch: EventBatch): Counts {
    this.stats.eventBatches++;
    const now = Date.now();
    for (const [counter, n] of Object.entries(batch.counts) as [EventCounter, number][]) {
      if (n > 0) this.#addEvent(counter, n);
    }
    for (const { counter, key } of batch.keyed) {
      if (this.#seen(key, now)) continue;
      this.#pendingKeys.set(key, now + IDEMPOTENCY_WINDOW_MS);
      this.#addEvent(counter, 1);
    }
    if (!this.#eventPersistScheduled && (this.#dirty.size > 0 || this.#pendingKeys.size > 0)) {
      this.#eventPersistScheduled = true;
      setTimeout(() => {
        this.#eventPersistScheduled = false;
        this.#commit([]);
      }, EVENT_PERSIST_MS);
    }
    return { ...this.#counts };
  }

  /** The item's counts. Writes nothing, so a read never costs a commit. */
  read(): ItemSnapshot {
    this.stats.reads++;
    if (this.faults.readFailures > 0) {
      this.faults.readFailures--;
      throw new Error("injected read failure");
    }
    return { counts: { ...this.#counts }, asOf: Date.now() };
  }

  #addEvent(counter: EventCounter, n: number): void {
    this.#counts[counter] += n;
    this.#dirty.add(counter);
  }

  #seen(key: string, now: number): boolean {
    if (this.#pendingKeys.has(key)) return true;
    if (!this.#schema.ready) return false;
    return (
      this.ctx.storage.sql
        .exec("SELECT 1 FROM idempotency_keys WHERE key = ? AND expires_at > ?", key, now)
        .toArray().length > 0
    );
  }

  #commitApplies(): void {
    const batch = this.#pendingApplies;
    this.#pendingApplies = [];
    this.#applyScheduled = false;
    try {
      if (this.faults.applyFailures > 0) {
        this.faults.applyFailures--;
        throw new Error("injected apply failure");
      }
      const counts = this.#commit(batch.flatMap((b) => b.changes));
      for (const { resolve } of batch) resolve(counts);
    } catch (error) {
      for (const { reject } of batch) reject(error);
    }
  }

  /**
   * One transaction for edge changes, the events gathered since the last
   * commit and their idempotency keys. Returns the counts after it. If it
   * throws, nothing is written and the events stay pending for the next one.
   */
  #commit(changes: readonly EdgeChange[]): Counts {
    if (changes.length === 0 && this.#dirty.size === 0 && this.#pendingKeys.size === 0) return { ...this.#counts };
    this.#schema.ensure();
    const next = { ...this.#counts };
    const sql = this.ctx.storage.sql;
    this.ctx.storage.transactionSync(() => {
      const touched = new Set<keyof Counts>(this.#dirty);
      for (const change of changes) {
        const delta = this.#applyEdge(change);
        if (delta !== 0) {
          next[change.counter] += delta;
          touched.add(change.counter);
        }
      }
      for (const counter of touched) {
        sql.exec(
          "INSERT INTO counts (counter, value) VALUES (?, ?) ON CONFLICT (counter) DO UPDATE SET value = excluded.value",
          counter,
          next[counter],
        );
      }
      if (this.#pendingKeys.size > 0) {
        for (const [key, expiresAt] of this.#pendingKeys) {
          sql.exec("INSERT OR REPLACE INTO idempotency_keys (key, expires_at) VALUES (?, ?)", key, expiresAt);
        }
        sql.exec(
          "DELETE FROM idempotency_keys WHERE key IN (SELECT key FROM idempotency_keys WHERE expires_at <= ? LIMIT ?)",
          Date.now(),
          PRUNE_BATCH,
        );
      }
    });
    this.stats.commits++;
    this.#counts = next;
    this.#dirty.clear();
    this.#pendingKeys.clear();
    return { ...next };
  }

  /** Stores the change if it is newer than the edge's version; returns the count delta. */
  #applyEdge(change: EdgeChange): number {
    const sql = this.ctx.storage.sql;
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
}
