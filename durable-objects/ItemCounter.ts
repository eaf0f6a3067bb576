import { log } from "../shared/log";
import { DurableObject } from "cloudflare:workers";
import { config } from "../shared/config";
import { DeadlineClock } from "../shared/deadline";
import type { Counts, ToggleCounter } from "../shared/counters";
import type { EdgeChange } from "../shared/edges";
import type { Placement } from "../shared/placement";
import { scheduleFlush } from "../metrics/flush";
import { metrics } from "../metrics/recorder";
import { CommitBatcher } from "./lib/commit-batcher";
import { ChildReports, sameCounts } from "./lib/child-reports";
import { applyEdge, forgetEdge, type StoredEdge } from "./lib/edge-store";
import { edgeKey } from "./lib/emission-outbox";
import { Emitter, type EmissionState } from "./lib/emitter";
import { EventCounters } from "./lib/event-counters";
import { Handover } from "./lib/handover";
import { emptyHeadState, loadHeadState, writeHeadState, type HeadState } from "./lib/head-state";
import { decideFlip, hotSettings, nextHotCheck, rateKeepSeconds, type HotSettings } from "./lib/hot-policy";
import { Alarm } from "./lib/alarm";
import { MeteredStorage } from "./lib/metered-storage";
import { itemShard } from "./lib/object-calls";
import { sendToQueue } from "./lib/queue-send";
import type { ApplyResult, ChildReport, EventBatch, ItemDescription, ItemSnapshot } from "../shared/contracts";
import { Recheck } from "./lib/recheck";
import { SqlSchema } from "./lib/sql-schema";
import { StateRow } from "./lib/state-row";
import { BASELINE, MIGRATIONS } from "./lib/item-counter-schema";
import { UniqueViewers } from "./lib/unique-viewers";
import { WriteRate } from "./lib/write-rate";

/** Views and shares wait at most this long for a commit: one commit for many events. */
const EVENT_PERSIST_MS = 250;
/**
 * A hot item's dashboard gauges outlive its next look at itself by this
 * long. Children report about once a second while they change, and the head
 * looks when its shown rate falls to zero and when it can first cool, so a
 * hot item refreshes them well within it.
 */
const HOT_GAUGE_TTL_SECONDS = 120;
/** A failed cooling check is retried by the alarm after this long. */
const RETRY_MS = 1_000;
/**
 * How far the stored earliest cooling time may lag the writes the head has
 * seen (#coolsAt): it is moved on only in steps this long, so a busy hot
 * head writes it about once a minute. A restarted head's window holds only
 * the writes since its start, so the bound is a floor, not the item's
 * whole window (docs/hot-items.md).
 */
const COOLS_AT_STEP_MS = 60_000;
/** A hand-over in flight when a head starts is resumed by its alarm this long after, should the run the start begins be cut. */
const HANDOVER_RESUME_MS = 60_000;

/** What one call asks of the head's next commit. */
type Work = { apply: readonly EdgeChange[] } | { report: { index: number; report: ChildReport } } | { flush: true } | { hint: true };

/**
 * One item's head: its counts and the (user, version, state) edges it holds,
 * plus the last report of each of its children when the item is hot.
 *
 * Invariant: for each toggle counter (likes, saves), the head's own count
 * equals the number of edges in state 1 that it holds (not handed over), and
 * an edge only moves to a strictly newer version. So a change delivered
 * twice, late or out of order is a no-op, and no count can go negative. Count
 * and edge are written in the same transaction. The item's total is the
 * head's count plus the newest report of each child.
 *
 * Placement: an edge this head holds is always accepted here. A new edge is
 * accepted only while the item is not hot, and an edge handed over to a child
 * never again; otherwise the change is refused with the placement (and the
 * child, for a handed-over edge), and the user's object records the child as
 * the edge's home and sends it there. So an edge never has two homes.
 *
 * Everything that arrives within ITEM_COMMIT_WINDOW_MS (applies, children's
 * reports, events) is written in one commit, so a hot head commits a few
 * times a second whatever its write rate.
 */
export class ItemCounter extends DurableObject<Env> {
  /** Calls this object has served since it started, for tests and metrics. */
  readonly stats = { reads: 0, applies: 0, refused: 0, reports: 0, eventBatches: 0, commits: 0 };

  readonly #storage: MeteredStorage;
  readonly #clock = new DeadlineClock();
  /** Counts, placement and the emission outbox: one row, written once per commit. */
  readonly #row: StateRow;
  readonly #alarm: Alarm;
  readonly #schema: SqlSchema;
  /** Count snapshots and edge changes on their way to D1 and the central store; it also owns the object's one alarm. */
  readonly emitter: Emitter;
  readonly #events: EventCounters;
  /** Counts (the head's own, events not yet persisted included), placement, split time, hand-over in flight. */
  #state: HeadState = emptyHeadState();
  readonly #children: ChildReports;
  #rate: WriteRate;
  /** Moves a hot head's edges to its children; public for its test hooks. */
  readonly handover: Handover;
  readonly #work = new CommitBatcher<Work, ApplyResult | Placement>(
    (batch) => this.#commitWork(batch),
    () => config(this.env).ITEM_COMMIT_WINDOW_MS,
  );
  readonly #viewers: UniqueViewers;
  readonly #recheck: Recheck;
  /**
   * The item this head counts (its object name, `post:123`). The runtime gives
   * it back as ctx.id.name, except to an instance that an alarm started (after
   * an eviction or a restart): then it is the one stored by an earlier commit.
   */
  readonly #item: string | undefined;
  /** The item is stored (or this head does not know it). */
  #itemStored: boolean;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#storage = new MeteredStorage(ctx.storage, "item_counter", () => scheduleFlush(env, ctx));
    this.#row = new StateRow(this.#storage);
    this.#alarm = new Alarm(this.#storage);
    this.#schema = new SqlSchema(this.#storage, MIGRATIONS, BASELINE);
    this.#viewers = new UniqueViewers(this.#storage.sql, () => this.#schema.ready);
    this.#children = new ChildReports(this.#storage.sql);
    this.#events = new EventCounters(this.#storage.sql, () => this.#schema.ready);
    const stored = this.#schema.ready ? this.#storage.sql.exec<{ item: string }>("SELECT item FROM identity").toArray()[0]?.item : undefined;
    this.#item = ctx.id.name ?? stored;
    this.#itemStored = stored !== undefined || this.#item === undefined;
    const name = this.#item;
    this.emitter = new Emitter(ctx, this.#storage, this.#alarm, (item, bodies) => sendToQueue(env, item, bodies), {
      ns: "ITEM_COUNTER",
      ready: () => this.#schema.ready,
      row: this.#row,
      identity: () => (name ? { name, item: name } : null),
      counts: () => this.#total(),
      snapshotExtras: () => ({ unique_viewers: this.#viewers.estimate() }),
      sent: () => this.#recheck.alarm(),
    });
    // Planned after every emission sent: only a hot item's rule reads its last write, so only a hot head looks it up.
    const head = () => {
      const hot = this.#state.placement.hot;
      return { ready: this.#schema.ready, hot, likes: this.#total().likes, lastWriteAt: hot ? this.#rate.lastWriteAt() : null };
    };
    this.#recheck = new Recheck(this.#storage, env, name, this.emitter, this.#alarm, head);
    // A hot head has its cooling check coming, a hand-over its next batch, a large item its next recheck.
    this.#alarm.register(() => this.#state.placement.hot || this.#state.handing !== null || this.#recheck.pending);
    this.handover = new Handover(
      {
        storage: this.#storage,
        row: this.#row,
        emitter: this.emitter,
        alarm: this.#alarm,
        children: this.#children,
        state: () => this.#state,
        setState: (state) => (this.#state = state),
        adopt: (child, edges) => this.#adopt(child, edges),
      },
      () => config(this.env).HANDOVER_BATCH,
    );
    if (this.#schema.ready) {
      this.#state = loadHeadState(this.#storage.sql);
      this.#children.load();
    }
    this.#rate = new WriteRate(this.#state.placement.hot ? this.#state.hotSince : Date.now(), rateKeepSeconds(this.#settings()));
    if (this.#state.placement.hot || this.#state.handing) {
      // Queued after the emitter read the stored alarm: a hot head always has its cooling check coming,
      // and a hand-over in flight an alarm that resumes it should this instance's run be cut.
      ctx.blockConcurrencyWhile(async () => {
        if (this.#state.placement.hot) this.#requestHotCheck(Date.now());
        else this.#alarm.request(Date.now() + HANDOVER_RESUME_MS);
      });
      setTimeout(() => this.handover.run(), 0);
    }
  }

  /**
   * Applies one edge's changes (all for one user and counter) and resolves
   * with the item's total after them, or refuses the edge when it belongs to
   * a child. Answered after the commit that holds it.
   */
  async apply(changes: readonly EdgeChange[]): Promise<ApplyResult> {
    this.stats.applies++;
    return (await this.#work.submit({ apply: changes })) as ApplyResult;
  }

  /** A child's report of its absolute counts; answered, after the commit that stores it, with the placement. */
  async report(index: number, report: ChildReport): Promise<Placement> {
    this.stats.reports++;
    return (await this.#work.submit({ report: { index, report } })) as Placement;
  }

  /** The host app expects this item to be hot: split now, before its likes come (it cools if they never do). */
  async expectHot(): Promise<Placement> {
    return (await this.#work.submit({ hint: true })) as Placement;
  }

  /** The aggregator wrote these emissions to both stores. */
  ackEmissions(emissions: readonly string[]): void {
    this.emitter.ack(emissions);
  }

  /** A removed user's edge (lib/edge-store.ts, forgetEdge); false while its unlike is still on its way. */
  forget(user: string, counter: ToggleCounter): boolean {
    return !this.#schema.ready || this.#storage.commit(() => {
      this.emitter.fold();
      return forgetEdge(this.#storage.sql, this.emitter, user, counter, true);
    });
  }

  /** What reconciliation compares the stores with: the item's total, its snapshot sequences, and views not yet under one. Writes nothing. */
  emissionState(): EmissionState & { counts: Counts; unrecorded: boolean } {
    return { ...this.emitter.state(), counts: this.#total(), unrecorded: this.#events.pending };
  }

  /** Reconciliation's repair: emit a fresh snapshot now, under a new sequence number. */
  resnapshot(): void {
    this.#schema.ensure();
    // A new sequence number for unchanged counts, so stores holding a wrong count at the old one take it.
    this.#storage.commit(() => {
      this.emitter.fold();
      this.emitter.recordCounts();
      this.#storeItem();
    });
    this.#itemStored = true;
    this.emitter.wake(0);
  }

  /** Adds a Worker isolate's views and shares; persisted with the head's next commit, shortly after. */
  addEvents(batch: EventBatch): Counts {
    this.stats.eventBatches++;
    if (batch.viewers) this.#viewers.merge(batch.viewers);
    if (this.#events.add(this.#state.counts, batch, Date.now())) {
      setTimeout(() => void this.#work.submit({ flush: true }).catch((e) => log("error", "events_persist_failed", { error: String(e) })), EVENT_PERSIST_MS);
    }
    return this.#total();
  }

  /** The item's counts: the head's own plus its children's last reports. Writes nothing. */
  read(): ItemSnapshot {
    this.stats.reads++;
    return { counts: this.#total(), asOf: Date.now() };
  }

  /**
   * The object's one alarm serves the emitter, the hand-over, the rechecks
   * and, while the item is hot, the cooling check (a hot item whose writes
   * stop entirely sends nothing that would make the head look). Never throws.
   */
  override async alarm(): Promise<void> {
    await this.#storage.runAlarm(async () => {
      await this.emitter.alarm();
      try {
        if (this.#state.placement.hot) await this.#work.submit({ flush: true });
        if (this.#state.placement.hot) this.#reportHot(Date.now());
        if (this.#state.placement.hot || this.#state.handing) this.handover.run();
      } catch (error) {
        log("error", "cooling_check_failed", { error: String(error) });
        this.#alarm.request(Date.now() + RETRY_MS);
      }
      await this.#recheck.alarm();
      // An acknowledgement that settled while the item was still hot or handing left the emitter's alarm set.
      this.#alarm.settle();
      scheduleFlush(this.env, this.ctx);
    });
  }

  /** The operators' view of the item. */
  describe(): ItemDescription {
    const now = Date.now();
    return {
      counts: this.#total(),
      seq: this.emitter.state().seq,
      hot: this.#state.placement.hot,
      shards: this.#state.placement.shards,
      children: this.#children.describe(),
      writes_per_sec: this.#rate.displayed(now),
      calls: (({ applies, refused, reports, reads, commits }) => ({ applies, refused, reports, reads, commits }))(this.stats),
    };
  }

  #total(): Counts {
    return this.#children.total(this.#state.counts);
  }

  /**
   * One commit for everything one window gathered: edge changes, children's
   * reports, a placement change, events and acknowledgements. If it throws,
   * nothing is written, every caller of the batch gets the error, and events
   * stay pending.
   */
  #commitWork(batch: readonly Work[]): (ApplyResult | Placement)[] {
    const now = Date.now();
    const sql = this.#storage.sql;
    const reports = this.#children.newer(batch.flatMap((w) => ("report" in w ? [[w.report.index, w.report.report] as const] : [])));
    for (const [index, report] of reports) this.#rate.record(this.#children.newWrites(index, report), now);
    this.#rate.record(batch.reduce((n, w) => n + ("apply" in w ? w.apply.length : 0), 0), now);
    const decided = decideFlip(this.#state.placement, this.#rate.view(now), this.#settings(), batch.some((w) => "hint" in w));
    // A head started again after a restart has not seen the writes before it: it cools no sooner than those it stored allow.
    const flip = decided && !decided.hot && now < this.#state.coolsAt ? null : decided;
    const placement = flip ?? this.#state.placement;
    const coolsAt = placement.hot ? this.#coolsAt(now) : this.#state.coolsAt;
    // The refusal check's read of an edge's row serves the apply of the work's first change: one read, not two.
    const accepted: { change: EdgeChange; read?: StoredEdge | null }[] = [];
    const refusals = batch.map((work) => {
      if (!("apply" in work) || !work.apply[0]) return null;
      const { refused, read } = this.#refusal(work.apply[0], placement);
      if (!refused) accepted.push(...work.apply.map((change, i) => (i === 0 ? { change, read } : { change })));
      return refused;
    });
    const before = this.#total();
    const next = { ...this.#state.counts };
    const events = this.#events.pending;
    const idle = accepted.length === 0 && reports.size === 0 && !flip && !events && !this.emitter.unfolded;
    if (!idle) this.#commit(() => {
      this.#schema.ensure();
      this.emitter.fold();
      let changed = events || flip !== null || coolsAt !== this.#state.coolsAt;
      // A row read before an earlier change of this batch wrote the same edge is stale.
      const written = new Set<string>();
      for (const { change, read } of accepted) {
        const key = edgeKey(change.user, change.counter);
        const delta = applyEdge(sql, change, written.has(key) ? undefined : read);
        written.add(key);
        if (delta === null) continue;
        this.emitter.recordEdge(change.user, change);
        next[change.counter] += delta;
        changed ||= delta !== 0;
      }
      this.#children.write(reports, now);
      this.#events.write(now);
      this.#viewers.persist();
      if (changed) writeHeadState(this.#row, { ...this.#state, counts: next, placement, hotSince: flip?.hot ? now : this.#state.hotSince, coolsAt });
      if (events || !sameCounts(before, this.#children.total(next, reports))) this.emitter.recordCounts();
    });
    this.#state = { ...this.#state, counts: next, hotSince: flip?.hot ? now : this.#state.hotSince, coolsAt: idle ? this.#state.coolsAt : coolsAt };
    this.#events.committed();
    this.#children.committed(reports, now);
    this.emitter.wake();
    if (flip) this.#setPlacement(flip);
    else if (this.#state.placement.hot && reports.size > 0) this.#reportHot(now);
    const counts = this.#total();
    return batch.map((work, i) => ("apply" in work ? (refusals[i] ?? { status: "applied", counts }) : this.#state.placement));
  }

  /**
   * Whether the head refuses a change (its edge was handed over, or the item
   * is hot and the edge new here), with the edge's row as read for that
   * (undefined before the schema exists), which the apply then need not read again.
   */
  #refusal(change: EdgeChange, placement: Placement): { refused: ApplyResult | null; read?: StoredEdge | null } {
    const held = this.#schema.ready
      ? (this.#storage.sql
          .exec<StoredEdge & { moved: number | null }>("SELECT state, inc, seq, moved FROM edges WHERE user = ? AND counter = ?", change.user, change.counter)
          .toArray()[0] ?? null)
      : undefined;
    const refused: ApplyResult | null =
      held?.moved != null ? { status: "moved", placement, home: held.moved } : !held && placement.hot ? { status: "moved", placement } : null;
    if (refused) this.stats.refused++;
    return held === undefined ? { refused } : { refused, read: held };
  }

  #commit(fn: () => void): void {
    this.#storage.commit(() => {
      fn();
      this.#storeItem();
    });
    this.#itemStored = true;
    this.stats.commits++;
  }

  /** Inside a commit that wrote the schema: the first one stores the item, which an alarm-started instance needs to emit. */
  #storeItem(): void {
    if (!this.#itemStored) this.#storage.sql.exec("INSERT OR IGNORE INTO identity (id, item) VALUES (1, ?)", this.#item!);
  }

  /**
   * Sends a child the edges the head hands over to it. A child that does not
   * answer in time fails the batch, which the alarm retries: adopting is
   * idempotent (the newer-version rule), so a late first answer is harmless.
   */
  async #adopt(child: number, edges: readonly EdgeChange[]): Promise<ChildReport> {
    const item = this.#item!;
    return await itemShard(this.env, item, child, "item_counter", { clock: this.#clock }).adopt(item, child, edges);
  }

  #setPlacement(placement: Placement): void {
    const grown = this.#state.placement.hot && placement.hot;
    this.#state = { ...this.#state, placement };
    if (placement.hot) {
      this.#rate.restart(Date.now());
      this.handover.run();
    }
    log("info", grown ? "item_grown" : placement.hot ? "item_split" : "item_merged", { shards: placement.shards });
    metrics.count(grown ? "shard_growths_total" : placement.hot ? "shard_splits_total" : "shard_merges_total");
    this.#reportHot(Date.now());
  }

  /**
   * The dashboard's hot-items gauges for this item (the head's name is the
   * item key), kept until a while after the head's next look at itself,
   * which a hot head asks its alarm for here; a cooled item's expire at once.
   */
  #reportHot(now: number): void {
    const next = this.#state.placement.hot ? this.#requestHotCheck(now) : null;
    const item = this.#item;
    if (item !== undefined) {
      // A hot item that will never look at itself again (it cannot cool) keeps its gauges until it does cool.
      const ttlSeconds = !this.#state.placement.hot ? 0 : next === null ? undefined : HOT_GAUGE_TTL_SECONDS + Math.max(0, Math.ceil((next - now) / 1000));
      metrics.gauge("hot_item_shards", { item }, this.#state.placement.shards, { ttlSeconds });
      metrics.gauge("hot_item_writes_per_second", { item }, this.#rate.displayed(now), { ttlSeconds });
    }
    scheduleFlush(this.env, this.ctx);
  }

  /**
   * The earliest a hot item may cool by the writes seen so far, to store:
   * only while those writes hold it hot, and moved on only in steps of
   * COOLS_AT_STEP_MS, so a busy hot head writes its state row for it about
   * once a minute, not with every report.
   */
  #coolsAt(now: number): number {
    const settings = this.#settings();
    // No write of now can put the bound a whole step past the stored one: not worth reading the window.
    if (now + (Math.ceil(settings.coolWindow) + 1) * 1000 < this.#state.coolsAt + COOLS_AT_STEP_MS) return this.#state.coolsAt;
    const bound = this.#rate.underAt(settings.coolRate, settings.coolWindow, now);
    return bound !== null && bound > now && bound >= this.#state.coolsAt + COOLS_AT_STEP_MS ? bound : this.#state.coolsAt;
  }

  /** Asks the alarm for a hot head's next look at itself (hot-policy.ts, nextHotCheck), and says when that is. */
  #requestHotCheck(now: number): number | null {
    const at = nextHotCheck(this.#rate, this.#settings(), now, this.#state.coolsAt);
    if (at !== null) this.#alarm.request(at);
    return at;
  }

  #settings(): HotSettings {
    return hotSettings(config(this.env));
  }
}
