import { log } from "../shared/log";
import { DurableObject } from "cloudflare:workers";
import { config } from "../shared/config";
import type { Counts, EventCounter, ToggleCounter } from "../shared/counters";
import type { EdgeChange } from "../shared/edges";
import { itemObjectName, shardObjectName } from "../shared/object-names";
import { HEAD, homeFor } from "../shared/placement";
import { backoffMs } from "../shared/retries";
import type { ApplyResult, EventPermit, ToggleLimits, ToggleRequest, ToggleResult } from "../shared/contracts";
import { cachedPlacement, rememberPlacement } from "./lib/placement-cache";
import { decide, type Limit } from "../shared/rate-limiter";
import { SqlSchema, type Migration } from "./lib/sql-schema";
import { scheduleFlush } from "../metrics/flush";
import { metrics } from "../metrics/recorder";

const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    sql: `
      CREATE TABLE meta (key TEXT PRIMARY KEY, value);
      CREATE TABLE edges (
        item    TEXT    NOT NULL,
        counter TEXT    NOT NULL,
        state   INTEGER NOT NULL,
        inc     INTEGER NOT NULL,
        seq     INTEGER NOT NULL,
        PRIMARY KEY (item, counter)
      ) WITHOUT ROWID;
      CREATE TABLE outbox (
        id      INTEGER PRIMARY KEY,
        item    TEXT    NOT NULL,
        counter TEXT    NOT NULL,
        state   INTEGER NOT NULL,
        inc     INTEGER NOT NULL,
        seq     INTEGER NOT NULL
      );
      CREATE TABLE rate (name TEXT PRIMARY KEY, tat REAL NOT NULL);
    `,
  },
  {
    id: 2,
    // An edge's home: the item's head (-1) or child i of a hot item. Chosen
    // when the edge is created, changed only when the head refuses it.
    sql: "ALTER TABLE edges ADD COLUMN home INTEGER NOT NULL DEFAULT -1",
  },
];

/** How long a like waits for the item side before answering without it. */
const DELIVERY_TIMEOUT_MS = 3_000;
/** A safety alarm after every burst of writes: it redelivers whatever a crash left in the outbox. */
const OUTBOX_SWEEP_MS = 10_000;
const RETRY_BASE_MS = 1_000;
const RETRY_CAP_MS = 5 * 60_000;
/** A change refused by a stale home is re-homed at most this many times per attempt. */
const MAX_REHOMES = 3;

type OutboxRow = { id: number; item: string; counter: ToggleCounter; state: 0 | 1; inc: number; seq: number };

/**
 * One user's likes and saves: the authority for "has this user liked this
 * item", and so for dedup. There is one such object per user in the world,
 * so a like counts once whatever the retries, concurrency or region.
 *
 * A state change, its outbox entry and the rate limiter's state are written in
 * one transaction (one commit), before anything is sent: a 200 is only sent
 * once that commit is durable, and the outbox is delivered until the item side
 * has it, by the request itself or later by the alarm.
 */
export class UserLikes extends DurableObject<Env> {
  readonly #schema: SqlSchema;
  #user: string | null = null;
  #inc = 1;
  #seq = 0;
  #tats = new Map<string, number>();
  /** Event limiter state is memory only: a view must not cost a durable write. */
  #eventTats = new Map<string, number>();
  /** Outbox rows the item side has applied; deleted by the next commit, never by one of their own. */
  #delivered = new Set<number>();
  #alarmAt: number | null = null;
  #retryAttempt = 0;
  #edgeLocks = new Map<string, Promise<void>>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#schema = new SqlSchema(ctx.storage, MIGRATIONS);
    if (!this.#schema.ready) return;
    const sql = ctx.storage.sql;
    for (const { key, value } of sql.exec<{ key: string; value: string | number }>("SELECT key, value FROM meta")) {
      if (key === "user") this.#user = String(value);
      if (key === "inc") this.#inc = Number(value);
      if (key === "seq") this.#seq = Number(value);
    }
    for (const { name, tat } of sql.exec<{ name: string; tat: number }>("SELECT name, tat FROM rate")) {
      this.#tats.set(name, tat);
    }
    ctx.blockConcurrencyWhile(async () => {
      this.#alarmAt = await ctx.storage.getAlarm();
      if (this.#alarmAt === null && this.#outboxSize() > 0) this.#armAlarm(Date.now() + RETRY_BASE_MS);
    });
  }

  async toggle(request: ToggleRequest): Promise<ToggleResult> {
    const now = Date.now();
    const decision = decide(this.#toggleLimits(request.counter, request.limits), this.#tats, now);
    if (!decision.allowed) return { kind: "rate_limited", retryAfter: decision.retryAfterSeconds };

    this.#schema.ensure();
    const want = request.on ? 1 : 0;
    const written = this.ctx.storage.transactionSync(() => {
      const sql = this.ctx.storage.sql;
      for (const [name, tat] of decision.next) {
        sql.exec("INSERT INTO rate (name, tat) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET tat = excluded.tat", name, tat);
      }
      this.#deleteDelivered();
      if (this.#user === null) sql.exec("INSERT INTO meta (key, value) VALUES ('user', ?)", request.user);
      const current = sql
        .exec<{ state: number }>("SELECT state FROM edges WHERE item = ? AND counter = ?", request.item, request.counter)
        .toArray()[0];
      if ((current?.state ?? 0) === want) return null;
      const seq = this.#seq + 1;
      // A new edge's home comes from the shard map this isolate knows; an
      // existing edge keeps its home whatever the item's state now.
      sql.exec(
        `INSERT INTO edges (item, counter, state, inc, seq, home) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (item, counter) DO UPDATE SET state = excluded.state, inc = excluded.inc, seq = excluded.seq`,
        request.item,
        request.counter,
        want,
        this.#inc,
        seq,
        homeFor(request.user, cachedPlacement(request.item, now)),
      );
      sql.exec("INSERT INTO meta (key, value) VALUES ('seq', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", seq);
      const row = sql
        .exec<{ id: number }>(
          "INSERT INTO outbox (item, counter, state, inc, seq) VALUES (?, ?, ?, ?, ?) RETURNING id",
          request.item,
          request.counter,
          want,
          this.#inc,
          seq,
        )
        .one();
      return { id: row.id, item: request.item, counter: request.counter, state: want, inc: this.#inc, seq } as OutboxRow;
    });
    for (const [name, tat] of decision.next) this.#tats.set(name, tat);
    this.#user = request.user;
    if (written === null) return { kind: "unchanged" };
    this.#seq = written.seq;
    if (this.#alarmAt === null) this.#armAlarm(now + OUTBOX_SWEEP_MS);
    metrics.count("outbox_enqueued_total", { object: "user_likes" });
    scheduleFlush(this.env, this.ctx);
    return { kind: "changed", counts: await this.#deliverEdge(written.item, written.counter) };
  }

  /**
   * Admits one view or share under the user's per-minute limit. Kept in
   * memory only, so an evicted object forgets it: a soft limit, never a commit.
   */
  allowEvent(counter: EventCounter): EventPermit {
    const now = Date.now();
    const limit = counter === "views" ? config(this.env).VIEW_RATE_LIMIT_PER_MINUTE : config(this.env).SHARE_RATE_LIMIT_PER_MINUTE;
    const decision = decide([{ name: counter, limit, periodMs: 60_000 }], this.#eventTats, now);
    if (!decision.allowed) return { allowed: false, retryAfter: decision.retryAfterSeconds };
    for (const [name, tat] of decision.next) this.#eventTats.set(name, tat);
    return { allowed: true };
  }

  /** Exact: answered from this user's own edges, never from a count or a cache. */
  hasLiked(items: readonly string[], counter: ToggleCounter): Record<string, boolean> {
    const liked: Record<string, boolean> = Object.fromEntries(items.map((item) => [item, false]));
    if (!this.#schema.ready) return liked;
    const rows = this.ctx.storage.sql.exec<{ item: string }>(
      "SELECT item FROM edges WHERE counter = ? AND state = 1 AND item IN (SELECT value FROM json_each(?))",
      counter,
      JSON.stringify(items),
    );
    for (const { item } of rows) liked[item] = true;
    return liked;
  }

  /** Changes the item side has not yet acknowledged (for operators and tests). */
  pendingDeliveries(): number {
    return this.#schema.ready ? this.#outboxSize() - this.#delivered.size : 0;
  }

  /**
   * Redelivers the outbox. Never throws: the platform gives up on an alarm
   * after six failed retries, so this handler catches everything and re-arms
   * itself with capped, jittered backoff for as long as the outbox is not empty.
   */
  override async alarm(): Promise<void> {
    this.#alarmAt = null;
    try {
      await this.#redeliver();
    } catch (error) {
      log("error", "outbox_redelivery_failed", { error: String(error) });
    }
    try {
      if (this.#outboxSize() > this.#delivered.size) {
        this.#retryAttempt++;
        const delay = RETRY_BASE_MS + backoffMs(this.#retryAttempt, RETRY_BASE_MS, RETRY_CAP_MS);
        this.#armAlarm(Date.now() + delay);
      } else {
        this.#retryAttempt = 0;
      }
    } catch (error) {
      log("error", "outbox_rearm_failed", { error: String(error) });
    }
  }

  async #redeliver(): Promise<void> {
    if (!this.#schema.ready) return;
    const edges = this.ctx.storage.sql
      .exec<{ id: number; item: string; counter: ToggleCounter }>("SELECT id, item, counter FROM outbox ORDER BY id")
      .toArray()
      .filter((row) => !this.#delivered.has(row.id));
    // Rows the requests already delivered are left for the user's next write
    // to delete: the sweep after a burst then costs no commit at all. Only
    // rows this alarm had to deliver are deleted here.
    if (edges.length === 0) return;
    const distinct = new Map(edges.map((row) => [`${row.item}\u0000${row.counter}`, row]));
    await Promise.all([...distinct.values()].map((row) => this.#deliverEdge(row.item, row.counter)));
    if (this.#delivered.size > 0) this.ctx.storage.transactionSync(() => this.#deleteDelivered());
  }

  /**
   * Delivers an edge's undelivered changes to its home. Deliveries of one
   * edge never overlap: a re-homing must not race a send to the old home, or
   * the edge could end up held by two homes. Returns the item's total when
   * the head applied the change, null when a child did or delivery failed
   * (the outbox keeps it and the alarm retries).
   */
  #deliverEdge(item: string, counter: ToggleCounter): Promise<Counts | null> {
    const key = `${item}\u0000${counter}`;
    const previous = this.#edgeLocks.get(key) ?? Promise.resolve();
    const run = previous.then(() => this.#sendEdge(item, counter));
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.#edgeLocks.set(key, settled);
    void settled.then(() => {
      if (this.#edgeLocks.get(key) === settled) this.#edgeLocks.delete(key);
    });
    return run;
  }

  async #sendEdge(item: string, counter: ToggleCounter): Promise<Counts | null> {
    const user = this.#user;
    if (user === null) return null;
    try {
      for (let attempt = 0; attempt < MAX_REHOMES; attempt++) {
        const sql = this.ctx.storage.sql;
        const rows = sql
          .exec<OutboxRow>("SELECT id, item, counter, state, inc, seq FROM outbox WHERE item = ? AND counter = ? ORDER BY id", item, counter)
          .toArray()
          .filter((row) => !this.#delivered.has(row.id));
        if (rows.length === 0) return null;
        const home = sql.exec<{ home: number }>("SELECT home FROM edges WHERE item = ? AND counter = ?", item, counter).one().home;
        const changes: EdgeChange[] = rows.map(({ state, inc, seq }) => ({ user, counter, state, inc, seq }));
        const result = await this.#withTimeout(this.#sendTo(item, home, changes));
        if (result.status === "applied") {
          for (const row of rows) this.#delivered.add(row.id);
          metrics.count("outbox_delivered_total", { object: "user_likes" }, rows.length);
          return result.counts;
        }
        rememberPlacement(item, result.placement, config(this.env).SHARD_MAP_TTL_MS, Date.now());
        const newHome = homeFor(user, result.placement);
        if (newHome === home) throw new Error(`home ${home} of ${item} refused its own edge`);
        // The one commit a stale shard map costs: the edge's new home is recorded before it is sent there.
        this.ctx.storage.transactionSync(() =>
          sql.exec("UPDATE edges SET home = ? WHERE item = ? AND counter = ?", newHome, item, counter),
        );
      }
      throw new Error(`${item} moved more than ${MAX_REHOMES} times in one delivery`);
    } catch (error) {
      log("error", "delivery_failed", { item, error: String(error) });
      const soon = Date.now() + RETRY_BASE_MS;
      if (this.#alarmAt === null || this.#alarmAt > soon) this.#armAlarm(soon);
      return null;
    }
  }

  #sendTo(item: string, home: number, changes: EdgeChange[]): Promise<ApplyResult> {
    if (home === HEAD) {
      const head = this.env.ITEM_COUNTER;
      return head.get(head.idFromName(itemObjectName(item))).apply(changes);
    }
    const shards = this.env.ITEM_SHARD;
    return shards.get(shards.idFromName(shardObjectName(item, home))).apply(item, home, changes);
  }

  async #withTimeout<T>(promise: Promise<T>): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      return await Promise.race([
        promise,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error("item side did not answer in time")), DELIVERY_TIMEOUT_MS);
        }),
      ]);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }

  #deleteDelivered(): void {
    if (this.#delivered.size === 0) return;
    this.ctx.storage.sql.exec("DELETE FROM outbox WHERE id IN (SELECT value FROM json_each(?))", JSON.stringify([...this.#delivered]));
    this.#delivered.clear();
  }

  #outboxSize(): number {
    return this.ctx.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM outbox").one().n;
  }

  #armAlarm(at: number): void {
    this.#alarmAt = at;
    void this.ctx.storage.setAlarm(at);
  }

  /** Likes and saves have separate buckets, each a per-minute and a per-day limit. */
  #toggleLimits(counter: ToggleCounter, stricter?: ToggleLimits): Limit[] {
    const [perMinute, perDay] = stricter
      ? [stricter.perMinute, stricter.perDay]
      : counter === "likes"
        ? [config(this.env).RATE_LIMIT_PER_MINUTE, config(this.env).RATE_LIMIT_PER_DAY]
        : [config(this.env).SAVE_RATE_LIMIT_PER_MINUTE, config(this.env).SAVE_RATE_LIMIT_PER_DAY];
    return [
      { name: `${counter}:minute`, limit: perMinute, periodMs: 60_000 },
      { name: `${counter}:day`, limit: perDay, periodMs: 86_400_000 },
    ];
  }
}
