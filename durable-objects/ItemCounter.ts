import { DurableObject } from "cloudflare:workers";
import { COUNTER_TYPES, zeroCounts, type Counts } from "../shared/counters";
import { isNewer, type EdgeChange } from "../shared/edges";
import { EMITTER_SCHEMA, Emitter, type EmissionState } from "./lib/emitter";
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
  { id: 2, sql: EMITTER_SCHEMA },
];

type PendingApply = { changes: readonly EdgeChange[]; resolve: (counts: Counts) => void; reject: (error: unknown) => void };

export type ItemSnapshot = { counts: Counts; asOf: number };

/**
 * One item's counts and the (user, version, state) edges behind them.
 *
 * Invariant: for each toggle counter, the count equals the number of edges in
 * state 1, and an edge only moves to a strictly newer version. So a change
 * delivered twice, late or out of order is a no-op, and no count can go
 * negative. Count and edge are written in the same transaction.
 */
export class ItemCounter extends DurableObject<Env> {
  /** Test hook: the next N apply batches throw, as a failing item side would. */
  readonly faults = { applyFailures: 0 };

  readonly #schema: SqlSchema;
  /** Count snapshots and edge changes on their way to D1 and the central store. */
  readonly emitter: Emitter;
  #counts: Counts = zeroCounts();
  #pending: PendingApply[] = [];
  #flushScheduled = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#schema = new SqlSchema(ctx.storage, MIGRATIONS);
    if (this.#schema.ready) {
      for (const row of ctx.storage.sql.exec<{ counter: string; value: number }>("SELECT counter, value FROM counts")) {
        if ((COUNTER_TYPES as readonly string[]).includes(row.counter)) this.#counts[row.counter as keyof Counts] = row.value;
      }
    }
    // The head is named by its item key (`post:123`), which the runtime gives back as ctx.id.name.
    const name = ctx.id.name;
    this.emitter = new Emitter(ctx, env.EVENTS, {
      ns: "ITEM_COUNTER",
      ready: () => this.#schema.ready,
      identity: () => (name ? { name, item: name } : null),
      counts: () => ({ ...this.#counts }),
    });
  }

  /**
   * Applies edge changes and resolves with the counts after them. Concurrent
   * calls are coalesced into one transaction (one storage commit), because a
   * commit, not the work inside it, is what limits an object's write rate.
   */
  async apply(changes: readonly EdgeChange[]): Promise<Counts> {
    return await new Promise((resolve, reject) => {
      this.#pending.push({ changes, resolve, reject });
      if (!this.#flushScheduled) {
        this.#flushScheduled = true;
        setTimeout(() => this.#flush(), 0);
      }
    });
  }

  /** The aggregator wrote these emissions to both stores. */
  ackEmissions(emissions: readonly string[]): void {
    this.emitter.ack(emissions);
  }

  /** What reconciliation compares the stores with. Writes nothing. */
  emissionState(): EmissionState & { counts: Counts } {
    return { ...this.emitter.state(), counts: { ...this.#counts } };
  }

  /** Reconciliation's repair: emit a fresh snapshot now, under a new sequence number. */
  resnapshot(): void {
    this.#schema.ensure();
    this.ctx.storage.transactionSync(() => {
      this.emitter.fold();
      // A new sequence number for unchanged counts, so stores holding a wrong count at the old one take it.
      this.emitter.recordCounts();
    });
    this.emitter.wake(0);
  }

  override async alarm(): Promise<void> {
    await this.emitter.alarm();
  }

  /** The item's counts. Writes nothing, so a read never costs a commit. */
  read(): ItemSnapshot {
    return { counts: { ...this.#counts }, asOf: Date.now() };
  }

  #flush(): void {
    const batch = this.#pending;
    this.#pending = [];
    this.#flushScheduled = false;
    try {
      if (this.faults.applyFailures > 0) {
        this.faults.applyFailures--;
        throw new Error("injected apply failure");
      }
      this.#schema.ensure();
      const counts = { ...this.#counts };
      this.ctx.storage.transactionSync(() => {
        this.emitter.fold();
        const touched = new Set<keyof Counts>();
        for (const { changes } of batch) {
          for (const change of changes) {
            const delta = this.#applyEdge(change);
            if (delta !== 0) {
              counts[change.counter] += delta;
              touched.add(change.counter);
            }
          }
        }
        for (const counter of touched) {
          this.ctx.storage.sql.exec(
            "INSERT INTO counts (counter, value) VALUES (?, ?) ON CONFLICT (counter) DO UPDATE SET value = excluded.value",
            counter,
            counts[counter],
          );
        }
        if (touched.size > 0) this.emitter.recordCounts();
      });
      this.#counts = counts;
      this.emitter.wake();
      for (const { resolve } of batch) resolve({ ...counts });
    } catch (error) {
      for (const { reject } of batch) reject(error);
    }
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
    this.emitter.recordEdge(change.user, change);
    return change.state - (current?.state ?? 0);
  }
}
