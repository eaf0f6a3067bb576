import { log } from "../shared/log";
import { DurableObject } from "cloudflare:workers";
import { config } from "../shared/config";
import type { EdgeChange } from "../shared/edges";
import { itemObjectName } from "../shared/object-names";
import { backoffMs } from "../shared/retries";
import type { ApplyResult } from "../shared/contracts";
import { CommitBatcher } from "./lib/commit-batcher";
import { applyEdge, EDGES_TABLE } from "./lib/edge-store";
import { EMITTER_SCHEMA, Emitter } from "./lib/emitter";
import { SqlSchema, type Migration } from "./lib/sql-schema";
import { scheduleFlush } from "../metrics/flush";

const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    sql: `
      ${EDGES_TABLE}
      CREATE TABLE meta (key TEXT PRIMARY KEY, value);
    `,
  },
  { id: 2, sql: EMITTER_SCHEMA },
];

/** A safety alarm after each burst of writes: it resends a report that a crash or a failure left unacknowledged. */
const REPORT_SWEEP_MS = 5_000;
const RETRY_BASE_MS = 1_000;
const RETRY_CAP_MS = 60_000;

type State = { item: string | null; index: number; likes: number; saves: number; seq: number; writes: number };

/**
 * One child of a hot item: it holds the edges of the users that hash to it
 * and counts them, exactly as the head does for its own edges.
 *
 * Invariant: its counts equal its edges in state 1, and it reports those
 * absolute counts to the head with a sequence number that grows with every
 * commit, so a report resent, repeated or delayed can never make the head's
 * total wrong. A child accepts every change sent to it: the user's object
 * records an edge's home before sending, so only that edge's users reach it.
 */
export class ItemShard extends DurableObject<Env> {
  readonly stats = { applies: 0, commits: 0, reports: 0 };

  readonly #schema: SqlSchema;
  /** This child's edge changes on their way to the central store; never counts (the head emits the item's total). */
  readonly emitter: Emitter;
  #state: State = { item: null, index: 0, likes: 0, saves: 0, seq: 0, writes: 0 };
  #ackedSeq = 0;
  #reportScheduled = false;
  #alarmAt: number | null = null;
  #retryAttempt = 0;
  readonly #applies = new CommitBatcher<readonly EdgeChange[], ApplyResult>((batch) => this.#commitApplies(batch));
  #identity: { item: string; index: number } | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#schema = new SqlSchema(ctx.storage, MIGRATIONS);
    // A child is named `post:123#3` (shardObjectName), which the runtime gives back as ctx.id.name.
    const name = ctx.id.name;
    this.emitter = new Emitter(ctx, env.EVENTS, {
      ns: "ITEM_SHARD",
      ready: () => this.#schema.ready,
      identity: () => (name && this.#state.item ? { name, item: this.#state.item } : null),
    });
    if (!this.#schema.ready) return;
    for (const { key, value } of ctx.storage.sql.exec<{ key: string; value: string | number }>("SELECT key, value FROM meta")) {
      if (key === "item") this.#state.item = String(value);
      else if (key in this.#state) (this.#state as Record<string, unknown>)[key] = Number(value);
    }
    ctx.blockConcurrencyWhile(async () => {
      this.#alarmAt = await ctx.storage.getAlarm();
    });
  }

  /** Applies one edge's changes; the item's total is the head's to give, so none is returned. */
  async apply(item: string, index: number, changes: readonly EdgeChange[]): Promise<ApplyResult> {
    this.stats.applies++;
    this.#identity ??= { item, index };
    return await this.#applies.submit(changes);
  }

  /** The aggregator wrote these emissions to the stores. */
  ackEmissions(emissions: readonly string[]): void {
    this.emitter.ack(emissions);
  }

  /** The one alarm serves the emitter and the report sweep. */
  override async alarm(): Promise<void> {
    await this.emitter.alarm();
    await this.#sweepReports();
    scheduleFlush(this.env, this.ctx);
  }

  /** Resends the report until the head has acknowledged the newest one. Never throws. */
  async #sweepReports(): Promise<void> {
    this.#alarmAt = null;
    try {
      if (this.#ackedSeq < this.#state.seq) await this.#report();
      this.#retryAttempt = 0;
    } catch (error) {
      log("error", "shard_report_failed", { item: this.#state.item, error: String(error) });
      try {
        this.#retryAttempt++;
        this.#armAlarm(Date.now() + RETRY_BASE_MS + backoffMs(this.#retryAttempt, RETRY_BASE_MS, RETRY_CAP_MS));
      } catch (rearm) {
        log("error", "shard_rearm_failed", { error: String(rearm) });
      }
    }
  }

  #commitApplies(batch: readonly (readonly EdgeChange[])[]): ApplyResult[] {
    this.#schema.ensure();
    const sql = this.ctx.storage.sql;
    const next = { ...this.#state };
    if (next.item === null && this.#identity) {
      next.item = this.#identity.item;
      next.index = this.#identity.index;
    }
    this.ctx.storage.transactionSync(() => {
      this.emitter.fold();
      for (const changes of batch) {
        for (const change of changes) {
          this.emitter.recordEdge(change.user, change);
          next[change.counter] += applyEdge(sql, change);
          next.writes++;
        }
      }
      next.seq++;
      for (const key of ["item", "index", "likes", "saves", "seq", "writes"] as const) {
        sql.exec("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", key, next[key]);
      }
    });
    this.stats.commits++;
    this.#state = next;
    this.emitter.wake();
    if (this.#alarmAt === null) this.#armAlarm(Date.now() + REPORT_SWEEP_MS);
    this.#scheduleReport();
    return batch.map(() => ({ status: "applied", counts: null }));
  }

  /** At most one report per CHILD_REPORT_MS while the child changes. */
  #scheduleReport(): void {
    if (this.#reportScheduled) return;
    this.#reportScheduled = true;
    setTimeout(() => {
      this.#reportScheduled = false;
      this.#report().catch((error) => {
        log("error", "shard_report_failed", { item: this.#state.item, error: String(error) });
        const soon = Date.now() + RETRY_BASE_MS;
        if (this.#alarmAt === null || this.#alarmAt > soon) this.#armAlarm(soon);
      });
    }, config(this.env).CHILD_REPORT_MS);
  }

  async #report(): Promise<void> {
    const { item, index, likes, saves, seq, writes } = this.#state;
    if (item === null) return;
    this.stats.reports++;
    const head = this.env.ITEM_COUNTER.get(this.env.ITEM_COUNTER.idFromName(itemObjectName(item)));
    await head.report(index, { likes, saves, seq, writes });
    this.#ackedSeq = Math.max(this.#ackedSeq, seq);
  }

  #armAlarm(at: number): void {
    this.#alarmAt = at;
    this.emitter.scheduleAlarm(at);
  }
}
