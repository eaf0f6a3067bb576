import { log } from "../shared/log";
import { DurableObject } from "cloudflare:workers";
import { config } from "../shared/config";
import { DeadlineClock } from "../shared/deadline";
import type { EventCounter, ToggleCounter } from "../shared/counters";
import { homeFor } from "../shared/placement";
import { backoffMs } from "../shared/retries";
import type { EventPermit, ImportedEdge, ImportOutcome, ToggleRequest, ToggleResult, UserEdge } from "../shared/contracts";
import { cachedPlacement } from "./lib/placement-cache";
import { decide } from "../shared/rate-limiter";
import { toggleLimits } from "./lib/toggle-limits";
import { SqlSchema } from "./lib/sql-schema";
import { BASELINE, MIGRATIONS } from "./lib/user-likes-schema";
import { edgesAfter, likedAmong, ownLikes, type OwnLikesPage } from "./lib/own-likes";
import { applyImports, lastAction, recordAction, writeUserEdge } from "./lib/user-edges";
import type { OwnLikesPosition } from "../shared/own-likes";
import type { RemovalKind, RemovalState } from "../shared/removal";
import { Removal } from "./lib/removal";
import { forgetAtHomes, requestWipe } from "./lib/removal-calls";
import { Alarm } from "./lib/alarm";
import { MeteredStorage } from "./lib/metered-storage";
import { EdgeDelivery } from "./lib/edge-delivery";
import { UserOutbox, type EdgeRef } from "./lib/user-outbox";
import { scheduleFlush } from "../metrics/flush";
import { OUTBOX_SWEEP_MS } from "../shared/object-windows";

const RETRY_BASE_MS = 1_000;
const RETRY_CAP_MS = 5 * 60_000;
/** A removal step cut off by a crash is taken up again after this long. */
const REMOVAL_SAFETY_MS = 10_000;

/**
 * One user's likes and saves: the authority for "has this user liked this
 * item", and so for dedup. There is one such object per user in the world,
 * so a like counts once whatever the retries, concurrency or region.
 *
 * A state change, its outbox entry and the rate limiter's state are written in
 * one transaction (one commit), before anything is sent: a 200 is only sent
 * once that commit is durable (the output gate holds the answer until then),
 * and the answer does not wait for the item side. Delivery starts
 * USER_DELIVERY_DELAY_MS after the commit (EdgeDelivery.deliverAfterAnswer);
 * the outbox keeps the change until the item side has acknowledged it, and
 * the alarm redelivers whatever a failure or a crash left there.
 */
export class UserLikes extends DurableObject<Env> {
  readonly #storage: MeteredStorage;
  readonly #alarm: Alarm;
  readonly #schema: SqlSchema;
  #user: string | null = null;
  #inc = 1;
  #seq = 0;
  #tats = new Map<string, number>();
  /** Event limiter state is memory only: a view must not cost a durable write. */
  #eventTats = new Map<string, number>();
  /**
   * What the item side has not acknowledged. Acknowledgements are stored by the
   * sweep alarm's commit, a repeat's, a removal step's, or a change's when the
   * list would pass 100 edges or the sweep is not due soon (`UserOutbox.next`).
   */
  readonly #outbox: UserOutbox;
  #retryAttempt = 0;
  readonly #delivery: EdgeDelivery;
  readonly #removal: Removal;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#storage = new MeteredStorage(ctx.storage, "user_likes", () => scheduleFlush(env, ctx));
    this.#alarm = new Alarm(this.#storage);
    this.#schema = new SqlSchema(this.#storage, MIGRATIONS, BASELINE);
    this.#outbox = new UserOutbox(this.#storage);
    const clock = new DeadlineClock();
    this.#delivery = new EdgeDelivery({
      env,
      clock,
      storage: this.#storage,
      outbox: this.#outbox,
      user: () => this.#user,
      failed: () => this.#alarm.request(Date.now() + RETRY_BASE_MS),
    });
    this.#removal = new Removal(
      {
        storage: this.#storage,
        version: () => ({ inc: this.#inc, seq: this.#seq }),
        writeSeq: (user, seq, changed) => {
          this.#writeState(user, seq, this.#tats, this.#outbox.swept(changed));
          this.#seq = seq;
        },
        undelivered: () => this.pendingDeliveries(),
        enqueued: (changed) => this.#delivery.enqueued(changed),
        deliver: (item, counter) => this.#delivery.deliver(item, counter),
        forget: (user, item, counter, home) => forgetAtHomes(env, clock, user, item, counter, home),
        requestWipe: (user) => requestWipe(env, user),
        ensureSchema: () => this.#schema.ensure(),
        wake: (at) => this.#alarm.set(at),
      },
      () => this.#schema.ready,
    );
    // The outbox keeps the alarm while it holds edges (delivered or not: the sweep stores the marks), a removal while it runs.
    this.#alarm.register(() => this.#outboxSize() > 0);
    this.#alarm.register(() => this.#removal.active);
    if (!this.#schema.ready) return;
    const state = this.#storage.sql
      .exec<{ user: string | null; inc: number; seq: number; tats: string }>("SELECT user, inc, seq, tats FROM state")
      .toArray()[0];
    if (state) {
      this.#user = state.user;
      this.#inc = state.inc;
      this.#seq = state.seq;
      this.#tats = new Map(Object.entries(JSON.parse(state.tats) as Record<string, number>));
    }
    ctx.blockConcurrencyWhile(async () => {
      await this.#storage.loadAlarm();
      if (!this.#alarm.needed) return;
      // A new instance has no delivery in flight: what its outbox holds (a crash's or an
      // eviction's leftovers) waits on the alarm, so it is brought forward, not left to the sweep.
      if (this.pendingDeliveries() > 0) this.#alarm.request(Date.now() + RETRY_BASE_MS);
      else this.#alarm.ensure(Date.now() + RETRY_BASE_MS);
    });
  }

  async toggle(request: ToggleRequest): Promise<ToggleResult> {
    if (request.on && this.#removal.barred) return { kind: "barred" };
    const now = Date.now();
    const decision = decide(toggleLimits(this.env, request.counter, request.limits), this.#tats, now);
    if (!decision.allowed) return { kind: "rate_limited", retryAfter: decision.retryAfterSeconds };

    const want = request.on ? 1 : 0;
    const tats = new Map([...this.#tats, ...decision.next]);
    const written = this.#storage.commit(() => {
      this.#schema.ensure();
      const sql = this.#storage.sql;
      const current = lastAction(sql, request.item, request.counter);
      // Asked before the user's last action on this edge (a kept intent, a call that hung): it counts against the limits, changes nothing.
      const superseded = (current?.actedAt ?? 0) > request.askedAt;
      const changed = !superseded && (current?.state ?? 0) !== want;
      const home = homeFor(request.user, cachedPlacement(request.item, now));
      const seq = changed ? this.#seq + 1 : this.#seq;
      // A change adds its edge to the outbox and, while the sweep is due soon, leaves delivered marks to it, reading no edge for them.
      // A request that changes nothing leaves the state row alone unless delivered marks wait for it (then it
      // stores them, its commit being made anyway): its use of the limits stays in memory until the user's next
      // change stores it (a soft limit, as for views).
      if (changed) this.#writeState(request.user, seq, tats, this.#outbox.next([{ item: request.item, counter: request.counter }], now, this.#storage.alarmAt));
      else {
        const left = this.#outbox.undeliveredIfStale();
        if (left !== null || this.#user === null) this.#writeState(request.user, seq, tats, this.#outbox.swept([], left ?? undefined));
      }
      if (superseded) return "superseded";
      // A new edge's home comes from the shard map this isolate knows; an
      // existing edge keeps its home whatever the item's state now.
      const edge = { item: request.item, counter: request.counter, inc: this.#inc, seq, home };
      if (!changed) {
        recordAction(sql, edge, request.askedAt);
        return null;
      }
      writeUserEdge(sql, { ...edge, state: want, at: request.askedAt });
      // The sweep rides on this commit: it redelivers whatever a crash leaves in the outbox, and stores the burst's delivered marks.
      this.#alarm.ensure(now + OUTBOX_SWEEP_MS);
      return { item: request.item, counter: request.counter, seq };
    });
    this.#tats = tats;
    this.#user = request.user;
    if (written === null || written === "superseded") return { kind: written ? "superseded" : "unchanged" };
    this.#seq = written.seq;
    scheduleFlush(this.env, this.ctx);
    // The answer needs only the commit above.
    this.#delivery.deliverAfterAnswer(written.item, written.counter);
    return { kind: "changed" };
  }

  /** A user's kept intents (workers/likes/intents.ts), oldest first, each as its own toggle: one call for a batch. */
  async applyIntents(requests: readonly ToggleRequest[]): Promise<ToggleResult[]> {
    const results: ToggleResult[] = [];
    for (const request of requests) results.push(await this.toggle(request));
    return results;
  }

  /**
   * Edges brought from another system, for one user, in one commit (see
   * applyImports): outside the user's rate limits, which pace people, not
   * migrations (the importer paces itself on the answers and the queue
   * backlog). Delivered at once, a few items at a time (EdgeDelivery.deliverImported).
   */
  importEdges(user: string, edges: readonly ImportedEdge[]): ImportOutcome[] {
    // A removed account takes no imports: they would bring back what the removal undid.
    if (this.#removal.barred) return edges.map(() => "barred");
    const now = Date.now();
    const result = this.#storage.commit(() => {
      this.#schema.ensure();
      const applied = applyImports(this.#storage.sql, edges, { inc: this.#inc, seq: this.#seq }, (item) => homeFor(user, cachedPlacement(item, now)));
      const changed = applied.changed.map((item): EdgeRef => ({ item, counter: "likes" }));
      this.#writeState(user, applied.seq, this.#tats, this.#outbox.next(changed, now, this.#storage.alarmAt));
      if (applied.changed.length > 0) this.#alarm.ensure(now + OUTBOX_SWEEP_MS);
      return applied;
    });
    this.#user = user;
    this.#seq = result.seq;
    if (result.changed.length > 0) scheduleFlush(this.env, this.ctx);
    // A few items at a time (lib/edge-delivery.ts); a failed delivery stays in the outbox for the alarm, as a live like's does.
    this.#delivery.deliverImported(result.changed);
    return result.outcomes;
  }

  /**
   * Resolves once the item side took every imported edge handed to it so far
   * (or their deliveries failed, and wait in the outbox for the alarm). The
   * import route waits on it before it answers: the importer's pace is then
   * what the item objects take. Its own call, so that a deadline passing while
   * it waits never repeats the import itself (a repeat would report the
   * applied edges as duplicates).
   */
  async importsDelivered(): Promise<void> {
    await this.#delivery.imported();
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
    return this.#schema.ready ? likedAmong(this.#storage.sql, items, counter) : Object.fromEntries(items.map((item) => [item, false]));
  }

  /** One page of the user's own likes, newest first (lib/own-likes.ts). */
  ownLikes(page: OwnLikesPage): OwnLikesPosition[] {
    return this.#schema.ready ? ownLikes(this.#storage.sql, page) : [];
  }

  /** The user's edges after `after`, in key order, for a rebuild of the central store (lib/own-likes.ts). Writes nothing. */
  edges(after: { item: string; counter: string } | null, limit: number): UserEdge[] {
    return this.#schema.ready ? edgesAfter(this.#storage.sql, after, limit) : [];
  }

  /** Starts removing the user's likes and saves (lib/removal.ts); asking again is idempotent. Resolves with where it stands. */
  removeUser(user: string, kind: RemovalKind): RemovalState | null {
    this.#user ??= user;
    this.#removal.start(user, kind, Date.now());
    return this.#removal.state();
  }

  /** Where the user's removal stands; null when none was ever asked. Writes nothing. */
  removal(): RemovalState | null {
    return this.#removal.state();
  }

  /** Lifts a purge's bar; false when the user is not purged (a deleted account stays barred). */
  liftBar(): boolean {
    return this.#removal.lift();
  }

  /** The Worker wiped the deleted user's rows in the stores (workers/pipeline/forget-user.ts). */
  removalWiped(): void {
    this.#removal.wiped(Date.now());
    // The wiping step's resend alarm has nothing left to do: an idle object keeps none.
    this.#alarm.settle();
  }

  /** Edges whose newest change the item side has not yet acknowledged (for operators and tests). */
  pendingDeliveries(): number {
    return this.#schema.ready ? this.#outbox.undelivered().length : 0;
  }

  /**
   * Redelivers the outbox and stores the delivered marks no other commit
   * took. Never throws: the platform gives up on an alarm after six failed
   * retries, so this handler catches everything and re-arms itself with
   * capped, jittered backoff for as long as the outbox is not empty.
   */
  override async alarm(): Promise<void> {
    await this.#storage.runAlarm(async () => {
      // Stored before any call goes out (the output gate), so a crash mid-step still leaves the next step an alarm.
      if (this.#removal.active) this.#alarm.set(Date.now() + REMOVAL_SAFETY_MS);
      let failures = 0;
      try {
        if (this.#schema.ready) failures = await this.#delivery.redeliver();
      } catch (error) {
        log("error", "outbox_redelivery_failed", { error: String(error) });
      }
      const removalStep = await this.#removal.step();
      try {
        // The sweep's one commit: every mark delivered by now, this run's and the burst's
        // before it. A delivery still in flight keeps its edge pending, and so the alarm.
        this.#storeDelivered();
      } catch (error) {
        log("error", "outbox_delivered_persist_failed", { error: String(error) });
        // The stored list still holds delivered edges: the next run stores their marks.
        this.#alarm.request(Date.now() + RETRY_BASE_MS);
      }
      try {
        let next = removalStep;
        if (this.pendingDeliveries() > 0) {
          // Only failures back off: an edge changed while this alarm ran has a delivery of its own, scheduled or in flight.
          this.#retryAttempt = failures > 0 ? this.#retryAttempt + 1 : 0;
          const retry = Date.now() + RETRY_BASE_MS + backoffMs(this.#retryAttempt, RETRY_BASE_MS, RETRY_CAP_MS);
          next = Math.min(next ?? retry, retry);
        } else {
          this.#retryAttempt = 0;
        }
        // No next time means the removal is over and every delivery acknowledged.
        if (next !== null) this.#alarm.set(next);
        else this.#alarm.settle();
      } catch (error) {
        log("error", "outbox_rearm_failed", { error: String(error) });
      }
    });
  }

  /**
   * Delivered marks that no other commit took: stored on their own, so
   * an evicted object does not wake up to deliver them again.
   */
  #storeDelivered(): void {
    const left = this.#outbox.undeliveredIfStale();
    if (left === null) return;
    this.#storage.commit(() => this.#storage.sql.exec("UPDATE state SET outbox = ?", this.#outbox.swept([], left)));
  }

  /** Inside a transaction: the user, the version sequence, the limiter's buckets and the outbox list (`UserOutbox.next` or `swept`), one row. */
  #writeState(user: string, seq: number, tats: ReadonlyMap<string, number>, outbox: string): void {
    this.#storage.sql.exec(
      `INSERT INTO state (id, user, inc, seq, tats, outbox) VALUES (1, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET user = excluded.user, seq = excluded.seq, tats = excluded.tats, outbox = excluded.outbox`,
      user,
      this.#inc,
      seq,
      JSON.stringify(Object.fromEntries(tats)),
      outbox,
    );
  }

  /** Edges in the stored outbox, delivered or not: the alarm is kept while there are any. */
  #outboxSize(): number {
    return this.#outbox.stored().length;
  }
}
