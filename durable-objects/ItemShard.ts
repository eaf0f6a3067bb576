import { log } from "../shared/log";
import { DurableObject } from "cloudflare:workers";
import { config } from "../shared/config";
import { DeadlineClock } from "../shared/deadline";
import type { ToggleCounter } from "../shared/counters";
import type { EdgeChange } from "../shared/edges";
import { shardObjectName } from "../shared/object-names";
import { backoffMs } from "../shared/retries";
import type { ApplyResult, ChildReport } from "../shared/contracts";
import { CommitBatcher } from "./lib/commit-batcher";
import { applyEdge, forgetEdge } from "./lib/edge-store";
import { Emitter } from "./lib/emitter";
import { Alarm } from "./lib/alarm";
import { MeteredStorage } from "./lib/metered-storage";
import { itemHead } from "./lib/object-calls";
import { sendToQueue } from "./lib/queue-send";
import { Soon } from "./lib/soon";
import { SqlSchema } from "./lib/sql-schema";
import { StateRow } from "./lib/state-row";
import { BASELINE, MIGRATIONS } from "./lib/item-shard-schema";
import { scheduleFlush } from "../metrics/flush";
import { ACK_PERSIST_MS } from "../shared/object-windows";

/** A safety alarm after each burst of writes: it resends a report that a crash or a failure left unacknowledged. */
const REPORT_SWEEP_MS = 5_000;
const RETRY_BASE_MS = 1_000;
const RETRY_CAP_MS = 60_000;

type State = { item: string | null; index: number; likes: number; saves: number; seq: number; writes: number; acked: number };
/** One call's changes; adopted ones are the head's hand-over, neither new writes nor new emissions. */
type Work = { changes: readonly EdgeChange[]; adopted: boolean };

/**
 * One child of a hot item: it holds the edges of the users that hash to it
 * and counts them, exactly as the head does for its own edges.
 *
 * Invariant: its counts equal its edges in state 1, and it reports those
 * absolute counts to the head with a sequence number that grows with every
 * commit, so a report resent, repeated or delayed can never make the head's
 * total wrong. A child accepts every change sent to it: the user's object
 * records an edge's home before sending, and the head marks an edge moved
 * before handing it over, so only that edge's users and its head reach it.
 */
export class ItemShard extends DurableObject<Env> {
  readonly stats = { applies: 0, commits: 0, reports: 0, failedReports: 0 };

  readonly #storage: MeteredStorage;
  readonly #clock = new DeadlineClock();
  /** Counts, report sequences and the emission outbox: one row, written once per commit. */
  readonly #row: StateRow;
  readonly #alarm: Alarm;
  readonly #schema: SqlSchema;
  /** This child's edge changes on their way to the central store; never counts (the head emits the item's total). */
  readonly emitter: Emitter;
  #state: State = { item: null, index: 0, likes: 0, saves: 0, seq: 0, writes: 0, acked: 0 };
  /** The newest sequence the head acknowledged; stored as `acked` by the next commit. */
  #ackedSeq = 0;
  readonly #persistAck: Soon;
  #reportScheduled = false;
  #retryAttempt = 0;
  readonly #applies = new CommitBatcher<Work, ApplyResult>(
    (batch) => this.#commitApplies(batch),
    () => config(this.env).ITEM_COMMIT_WINDOW_MS,
  );
  #identity: { item: string; index: number } | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#storage = new MeteredStorage(ctx.storage, "item_shard", () => scheduleFlush(env, ctx));
    this.#row = new StateRow(this.#storage);
    this.#alarm = new Alarm(this.#storage);
    this.#schema = new SqlSchema(this.#storage, MIGRATIONS, BASELINE);
    // A child is named `post:123#3` (shardObjectName) from its stored item and index: ctx.id.name is
    // missing in an instance that an alarm started (after an eviction or a restart).
    this.emitter = new Emitter(ctx, this.#storage, this.#alarm, (item, bodies) => sendToQueue(env, item, bodies), {
      ns: "ITEM_SHARD",
      ready: () => this.#schema.ready,
      row: this.#row,
      identity: () => (this.#state.item !== null ? { name: shardObjectName(this.#state.item, this.#state.index), item: this.#state.item } : null),
    });
    // A report the head has not acknowledged keeps the alarm: it resends what a crash or a failure lost.
    this.#alarm.register(() => this.#state.acked < this.#state.seq);
    this.#persistAck = new Soon("shard_ack_persist_failed", ACK_PERSIST_MS, () => this.#storeAck());
    if (!this.#schema.ready) return;
    const row = this.#storage.sql.exec<Omit<State, "index"> & { idx: number }>("SELECT item, idx, likes, saves, seq, writes, acked FROM state").toArray()[0];
    if (row) {
      const { idx, ...rest } = row;
      this.#state = { ...rest, index: idx };
      this.#ackedSeq = row.acked;
    }
  }

  /** Applies one edge's changes; the item's total is the head's to give, so none is returned. */
  async apply(item: string, index: number, changes: readonly EdgeChange[]): Promise<ApplyResult> {
    this.stats.applies++;
    this.#identity ??= { item, index };
    return await this.#applies.submit({ changes, adopted: false });
  }

  /**
   * Edges the head hands over, at the versions the head held: applied under
   * the same newer-version rule, so a change a user already sent here wins
   * and adopting twice is a no-op. Answers with this child's report after
   * the commit, which the head stores in the commit that stops counting them.
   */
  async adopt(item: string, index: number, edges: readonly EdgeChange[]): Promise<ChildReport> {
    this.#identity ??= { item, index };
    await this.#applies.submit({ changes: edges, adopted: true });
    const { likes, saves, seq, writes } = this.#state;
    return { likes, saves, seq, writes };
  }

  /** The aggregator wrote these emissions to the stores. */
  ackEmissions(emissions: readonly string[]): void {
    this.emitter.ack(emissions);
  }

  /** A removed user's edge (lib/edge-store.ts, forgetEdge); false while its unlike is still on its way. */
  forget(user: string, counter: ToggleCounter): boolean {
    return !this.#schema.ready || this.#storage.commit(() => {
      this.emitter.fold();
      return forgetEdge(this.#storage.sql, this.emitter, user, counter, false);
    });
  }

  /** The one alarm serves the emitter and the report sweep. */
  override async alarm(): Promise<void> {
    await this.#storage.runAlarm(async () => {
      await this.emitter.alarm();
      await this.#sweepReports();
      // Once nothing is left to send or report, the alarm goes in this turn, with the sweep's commit if it made one, not in a transaction of the runtime's own after the run.
      this.#alarm.settle();
      scheduleFlush(this.env, this.ctx);
    });
  }

  /** Resends the report until the head has acknowledged the newest one. Never throws. */
  async #sweepReports(): Promise<void> {
    try {
      if (this.#ackedSeq < this.#state.seq) await this.#report();
      this.#retryAttempt = 0;
    } catch (error) {
      this.stats.failedReports++;
      log("error", "shard_report_failed", { item: this.#state.item, error: String(error) });
      try {
        this.#retryAttempt++;
        this.#alarm.request(Date.now() + RETRY_BASE_MS + backoffMs(this.#retryAttempt, RETRY_BASE_MS, RETRY_CAP_MS));
      } catch (rearm) {
        log("error", "shard_rearm_failed", { error: String(rearm) });
      }
    }
  }

  #commitApplies(batch: readonly Work[]): ApplyResult[] {
    const sql = this.#storage.sql;
    const next = { ...this.#state, acked: this.#ackedSeq };
    if (next.item === null && this.#identity) {
      next.item = this.#identity.item;
      next.index = this.#identity.index;
    }
    this.#storage.commit(() => {
      this.#schema.ensure();
      this.emitter.fold();
      for (const { changes, adopted } of batch) {
        for (const change of changes) {
          const delta = applyEdge(sql, change);
          if (!adopted) next.writes++;
          if (delta === null) continue;
          if (!adopted) this.emitter.recordEdge(change.user, change);
          next[change.counter] += delta;
        }
      }
      next.seq++;
      const { item, index: idx, likes, saves, seq, writes, acked } = next;
      this.#row.stage("child", { columns: () => ({ item, idx, likes, saves, seq, writes, acked }) });
    });
    this.stats.commits++;
    this.#state = next;
    if (this.#ackedSeq <= next.acked) this.#persistAck.cancel();
    this.emitter.wake();
    this.#alarm.ensure(Date.now() + REPORT_SWEEP_MS);
    // The head learns an adoption's counts from the adopt answer itself.
    if (batch.some((work) => !work.adopted)) this.#scheduleReport();
    return batch.map(() => ({ status: "applied", counts: null }));
  }

  /** At most one report per CHILD_REPORT_MS while the child changes. */
  #scheduleReport(): void {
    if (this.#reportScheduled) return;
    this.#reportScheduled = true;
    setTimeout(() => {
      this.#reportScheduled = false;
      this.#report().catch((error) => {
        this.stats.failedReports++;
        log("error", "shard_report_failed", { item: this.#state.item, error: String(error) });
        this.#alarm.request(Date.now() + RETRY_BASE_MS);
      });
    }, config(this.env).CHILD_REPORT_MS);
  }

  /**
   * A head that does not answer in time fails the report, which the alarm
   * resends: reports are absolute and numbered, so a late first answer is harmless.
   */
  async #report(): Promise<void> {
    const { item, index, likes, saves, seq, writes } = this.#state;
    if (item === null) return;
    this.stats.reports++;
    await itemHead(this.env, item, "item_shard", { clock: this.#clock }).report(index, { likes, saves, seq, writes });
    this.#ackedSeq = Math.max(this.#ackedSeq, seq);
    if (this.#ackedSeq > this.#state.acked) this.#persistAck.request();
  }

  /** The head's acknowledgement, stored unless an apply's commit already did. */
  #storeAck(): void {
    if (this.#ackedSeq > this.#state.acked) {
      const acked = this.#ackedSeq;
      this.#storage.commit(() => this.#row.stage("child", { columns: () => ({ acked }) }));
      this.#state = { ...this.#state, acked: this.#ackedSeq };
    }
    this.#alarm.settle();
  }
}
