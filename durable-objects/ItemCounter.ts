import { log } from "../shared/log";
import { DurableObject } from "cloudflare:workers";
import { config } from "../shared/config";
import { COUNTER_TYPES, TOGGLE_COUNTERS, zeroCounts, type Counts, type EventCounter } from "../shared/counters";
import type { EdgeChange } from "../shared/edges";
import type { Placement } from "../shared/placement";
import { scheduleFlush } from "../metrics/flush";
import { metrics } from "../metrics/recorder";
import { CommitBatcher } from "./lib/commit-batcher";
import { applyEdge, EDGES_TABLE, hasEdge } from "./lib/edge-store";
import { EMITTER_SCHEMA, Emitter, type EmissionState } from "./lib/emitter";
import type { ApplyResult, ChildReport, EventBatch, ItemDescription, ItemSnapshot } from "../shared/contracts";
import { SqlSchema, type Migration } from "./lib/sql-schema";
import { UniqueViewers } from "./lib/unique-viewers";
import { WriteRate } from "./lib/write-rate";

const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    sql: `
      ${EDGES_TABLE}
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
  {
    id: 3,
    sql: `
      CREATE TABLE children (
        idx         INTEGER PRIMARY KEY,
        likes       INTEGER NOT NULL,
        saves       INTEGER NOT NULL,
        seq         INTEGER NOT NULL,
        writes      INTEGER NOT NULL,
        reported_at INTEGER NOT NULL
      );
    `,
  },
  { id: 4, sql: EMITTER_SCHEMA },
  { id: 5, sql: "CREATE TABLE unique_viewers (id INTEGER PRIMARY KEY CHECK (id = 1), sketch BLOB NOT NULL);" },
];

/** Views and shares are persisted at most this often: one commit for many events. */
const EVENT_PERSIST_MS = 250;
const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** Expired idempotency keys are pruned a bounded number at a time, inside commits that happen anyway. */
const PRUNE_BATCH = 500;
/** The write rate shown to operators is measured over this many seconds. */
const RATE_DISPLAY_SECONDS = 10;
/**
 * A hot item's dashboard gauges outlive this long without a refresh. Children
 * report about once a second while they change and the cooling check runs at
 * least once a minute, so a hot item refreshes well within it.
 */
const HOT_GAUGE_TTL_SECONDS = 120;

type StoredChild = ChildReport & { reportedAt: number };

/**
 * One item's head: its counts and the (user, version, state) edges it holds,
 * plus the last report of each of its children when the item is hot.
 *
 * Invariant: for each toggle counter (likes, saves), the head's own count
 * equals the number of its edges in state 1, and an edge only moves to a
 * strictly newer version. So a change delivered twice, late or out of order is
 * a no-op, and no count can go negative. Count and edge are written in the
 * same transaction. The item's total is the head's count plus the newest
 * report of each child.
 *
 * Placement: an edge this head already holds is always accepted here. A new
 * edge is accepted only while the item is not hot; otherwise it is refused
 * with the current placement, and the user's object records the child as the
 * edge's home and sends it there. So an edge never has two homes.
 *
 * Event counters (views, shares) are plain sums, always at the head. They are
 * held in memory and persisted at most every EVENT_PERSIST_MS (or with the
 * next edge commit): a crash may lose that last fraction of a second of
 * views, a trade-off likes and saves never take.
 */
export class ItemCounter extends DurableObject<Env> {
  /** Test hooks: the next N apply batches or reads throw, as a failing item side would. */
  readonly faults = { applyFailures: 0, readFailures: 0 };
  /** Calls this object has served since it started, for tests and metrics. */
  readonly stats = { reads: 0, applies: 0, refused: 0, reports: 0, eventBatches: 0, commits: 0 };

  readonly #schema: SqlSchema;
  /** Count snapshots and edge changes on their way to D1 and the central store; it also owns the object's one alarm. */
  readonly emitter: Emitter;
  /** The head's own counts, including events not yet persisted. */
  #counts: Counts = zeroCounts();
  #children = new Map<number, StoredChild>();
  #hot = false;
  #shards = 0;
  readonly #rate: WriteRate;
  #dirty = new Set<EventCounter>();
  #pendingKeys = new Map<string, number>();
  #eventPersistScheduled = false;
  readonly #viewers = new UniqueViewers(this.ctx.storage.sql, () => this.#schema.ready);
  readonly #applies = new CommitBatcher<readonly EdgeChange[], ApplyResult>((batch) => this.#commitApplies(batch));

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#schema = new SqlSchema(ctx.storage, MIGRATIONS);
    this.#rate = new WriteRate(Date.now(), Math.max(this.#config().coolWindow, this.#config().hotWindow, RATE_DISPLAY_SECONDS));
    // The head is named by its item key (`post:123`), which the runtime gives back as ctx.id.name.
    const name = ctx.id.name;
    this.emitter = new Emitter(ctx, env.EVENTS, {
      ns: "ITEM_COUNTER",
      ready: () => this.#schema.ready,
      identity: () => (name ? { name, item: name } : null),
      counts: () => this.#total(),
      snapshotExtras: () => ({ unique_viewers: this.#viewers.estimate() }),
    });
    if (!this.#schema.ready) return;
    const sql = ctx.storage.sql;
    for (const row of sql.exec<{ counter: string; value: number }>("SELECT counter, value FROM counts")) {
      if ((COUNTER_TYPES as readonly string[]).includes(row.counter)) this.#counts[row.counter as keyof Counts] = row.value;
    }
    for (const { key, value } of sql.exec<{ key: string; value: number }>("SELECT key, value FROM meta")) {
      if (key === "hot") this.#hot = value === 1;
      if (key === "shards") this.#shards = value;
    }
    if (this.#hot) {
      ctx.blockConcurrencyWhile(async () => {
        if ((await ctx.storage.getAlarm()) === null) this.#armCoolingCheck();
      });
    }
    for (const row of sql.exec<{ idx: number; likes: number; saves: number; seq: number; writes: number; reported_at: number }>(
      "SELECT idx, likes, saves, seq, writes, reported_at FROM children",
    )) {
      this.#children.set(row.idx, { likes: row.likes, saves: row.saves, seq: row.seq, writes: row.writes, reportedAt: row.reported_at });
    }
  }

  /**
   * Applies one edge's changes (all for one user and counter) and resolves
   * with the item's total after them, or refuses a new edge while the item is
   * hot. Concurrent calls are coalesced into one transaction.
   */
  async apply(changes: readonly EdgeChange[]): Promise<ApplyResult> {
    this.stats.applies++;
    return await this.#applies.submit(changes);
  }

  /** A child's report of its absolute counts; answers with the current placement as its acknowledgement. */
  report(index: number, report: ChildReport): Placement {
    this.stats.reports++;
    const now = Date.now();
    const previous = this.#children.get(index);
    if (previous && report.seq <= previous.seq) return this.#placement();
    this.#rate.record(Math.max(0, report.writes - (previous?.writes ?? 0)), now);
    this.#schema.ensure();
    const flip = this.#decideFlip(now);
    this.ctx.storage.transactionSync(() => {
      this.emitter.fold();
      if (!previous || previous.likes !== report.likes || previous.saves !== report.saves) this.emitter.recordCounts();
      this.ctx.storage.sql.exec(
        `INSERT INTO children (idx, likes, saves, seq, writes, reported_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (idx) DO UPDATE SET likes = excluded.likes, saves = excluded.saves, seq = excluded.seq,
           writes = excluded.writes, reported_at = excluded.reported_at`,
        index,
        report.likes,
        report.saves,
        report.seq,
        report.writes,
        now,
      );
      if (flip) this.#writePlacement(flip);
    });
    this.#children.set(index, { ...report, reportedAt: now });
    this.emitter.wake();
    if (flip) this.#setPlacement(flip);
    else if (this.#hot) this.#reportHot(now);
    return this.#placement();
  }

  /** The aggregator wrote these emissions to both stores. */
  ackEmissions(emissions: readonly string[]): void {
    this.emitter.ack(emissions);
  }

  /** What reconciliation compares the stores with: the item's total and its snapshot sequences. Writes nothing. */
  emissionState(): EmissionState & { counts: Counts } {
    return { ...this.emitter.state(), counts: this.#total() };
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

  /** Adds a Worker isolate's views and shares; persisted in a batch shortly after. */
  addEvents(batch: EventBatch): Counts {
    this.stats.eventBatches++;
    const now = Date.now();
    for (const [counter, n] of Object.entries(batch.counts) as [EventCounter, number][]) {
      if (n > 0) this.#addEvent(counter, n);
    }
    if (batch.viewers) this.#viewers.merge(batch.viewers);
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
    return this.#total();
  }

  /** The item's counts: the head's own plus its children's last reports. Writes nothing. */
  read(): ItemSnapshot {
    this.stats.reads++;
    if (this.faults.readFailures > 0) {
      this.faults.readFailures--;
      throw new Error("injected read failure");
    }
    return { counts: this.#total(), asOf: Date.now() };
  }

  /** The object's one alarm serves the emitter and, while the item is hot, the cooling check. */
  override async alarm(): Promise<void> {
    await this.emitter.alarm();
    this.#coolingCheck();
    scheduleFlush(this.env, this.ctx);
  }

  /**
   * While the item is hot, checks now and then whether it has cooled: a hot
   * item whose writes stop entirely sends nothing that would make the head
   * look. Never throws; re-arms itself while the item stays hot.
   */
  #coolingCheck(): void {
    try {
      if (!this.#hot) return;
      const flip = this.#decideFlip(Date.now());
      if (flip) {
        this.ctx.storage.transactionSync(() => this.#writePlacement(flip));
        this.#setPlacement(flip);
      } else {
        this.#reportHot(Date.now());
        this.#armCoolingCheck();
      }
    } catch (error) {
      log("error", "cooling_check_failed", { error: String(error) });
      try {
        this.#armCoolingCheck();
      } catch (rearm) {
        log("error", "cooling_rearm_failed", { error: String(rearm) });
      }
    }
  }

  /** The operators' view of the item. */
  describe(): ItemDescription {
    const now = Date.now();
    return {
      counts: this.#total(),
      seq: this.emitter.state().seq,
      hot: this.#hot,
      shards: this.#shards,
      children: [...this.#children]
        .sort(([a], [b]) => a - b)
        .map(([index, c]) => ({
          index,
          likes: c.likes,
          saves: c.saves,
          seq: c.seq,
          writes: c.writes,
          reported_at: new Date(c.reportedAt).toISOString(),
        })),
      writes_per_sec: this.#writesPerSecond(now),
      calls: { applies: this.stats.applies, refused: this.stats.refused, reports: this.stats.reports, reads: this.stats.reads },
    };
  }

  #total(): Counts {
    const total = { ...this.#counts };
    for (const child of this.#children.values()) {
      for (const counter of TOGGLE_COUNTERS) total[counter] += child[counter];
    }
    return total;
  }

  #placement(): Placement {
    return { hot: this.#hot, shards: this.#shards };
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

  #commitApplies(batch: readonly (readonly EdgeChange[])[]): ApplyResult[] {
    if (this.faults.applyFailures > 0) {
      this.faults.applyFailures--;
      throw new Error("injected apply failure");
    }
    const now = Date.now();
    this.#rate.record(batch.reduce((n, changes) => n + changes.length, 0), now);
    const flip = this.#decideFlip(now);
    const hot = flip ? flip.hot : this.#hot;
    const accepted: EdgeChange[] = [];
    const results: (ApplyResult | null)[] = batch.map((changes) => {
      const first = changes[0];
      if (!first) return null;
      const isNew = !this.#schema.ready || !hasEdge(this.ctx.storage.sql, first.user, first.counter);
      if (isNew && hot) {
        this.stats.refused++;
        return { status: "moved", placement: flip ?? this.#placement() };
      }
      accepted.push(...changes);
      return null;
    });
    const counts = this.#commit(accepted, flip);
    if (flip) this.#setPlacement(flip);
    return results.map((r) => r ?? { status: "applied", counts });
  }

  /**
   * One transaction for edge changes, a placement change, the events gathered
   * since the last commit and their idempotency keys. Returns the item's total
   * after it. If it throws, nothing is written and the events stay pending.
   */
  #commit(changes: readonly EdgeChange[], flip?: Placement | null): Counts {
    if (changes.length === 0 && !flip && this.#dirty.size === 0 && this.#pendingKeys.size === 0) return this.#total();
    this.#schema.ensure();
    const next = { ...this.#counts };
    const sql = this.ctx.storage.sql;
    this.ctx.storage.transactionSync(() => {
      this.emitter.fold();
      const touched = new Set<keyof Counts>(this.#dirty);
      for (const change of changes) {
        this.emitter.recordEdge(change.user, change);
        const delta = applyEdge(sql, change);
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
      this.#viewers.persist();
      if (touched.size > 0) this.emitter.recordCounts();
      if (flip) this.#writePlacement(flip);
    });
    this.emitter.wake();
    this.stats.commits++;
    this.#counts = next;
    this.#dirty.clear();
    this.#pendingKeys.clear();
    return this.#total();
  }

  /**
   * Hot after HOT_WRITES_PER_SEC sustained over HOT_WINDOW_SECONDS; cool after
   * the rate stayed under COOL_WRITES_PER_SEC for COOL_WINDOW_SECONDS. Returns
   * the new placement when it changes, else null.
   */
  #decideFlip(now: number): Placement | null {
    const config = this.#config();
    const observed = this.#rate.observedSeconds(now);
    if (!this.#hot) {
      if (observed < config.hotWindow || this.#rate.perSecond(config.hotWindow, now) < config.hotRate) return null;
      // WARNING: an item's N is fixed once chosen: the same children serve every hot period.
      return { hot: true, shards: this.#shards > 0 ? this.#shards : config.shards };
    }
    if (observed < config.coolWindow || this.#rate.perSecond(config.coolWindow, now) >= config.coolRate) return null;
    return { hot: false, shards: this.#shards };
  }

  #setPlacement(placement: Placement): void {
    this.#hot = placement.hot;
    this.#shards = placement.shards;
    if (placement.hot) this.#armCoolingCheck();
    log("info", placement.hot ? "item_split" : "item_merged", { shards: placement.shards });
    metrics.count(placement.hot ? "shard_splits_total" : "shard_merges_total");
    this.#reportHot(Date.now());
  }

  #writesPerSecond(now: number): number {
    return this.#rate.perSecond(Math.min(RATE_DISPLAY_SECONDS, Math.max(1, Math.ceil(this.#rate.observedSeconds(now)))), now);
  }

  /** The dashboard's hot-items gauges for this item (the head's name is the item key); a cooled item's expire at once. */
  #reportHot(now: number): void {
    const item = this.ctx.id.name;
    if (item !== undefined) {
      const ttlSeconds = this.#hot ? HOT_GAUGE_TTL_SECONDS : 0;
      metrics.gauge("hot_item_shards", { item }, this.#shards, { ttlSeconds });
      metrics.gauge("hot_item_writes_per_second", { item }, this.#writesPerSecond(now), { ttlSeconds });
    }
    scheduleFlush(this.env, this.ctx);
  }

  /** The next cooling check: after one cool window, and at least once a minute for long windows. */
  #armCoolingCheck(): void {
    const { coolWindow } = this.#config();
    this.emitter.scheduleAlarm(Date.now() + Math.min(coolWindow, 60) * 1000);
  }

  #writePlacement(placement: Placement): void {
    const sql = this.ctx.storage.sql;
    sql.exec("INSERT INTO meta (key, value) VALUES ('hot', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", placement.hot ? 1 : 0);
    sql.exec("INSERT INTO meta (key, value) VALUES ('shards', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", placement.shards);
  }

  #config() {
    const settings = config(this.env);
    return {
      hotRate: settings.HOT_WRITES_PER_SEC,
      hotWindow: settings.HOT_WINDOW_SECONDS,
      coolRate: settings.COOL_WRITES_PER_SEC,
      coolWindow: settings.COOL_WINDOW_SECONDS,
      shards: settings.HOT_SHARDS,
    };
  }
}
