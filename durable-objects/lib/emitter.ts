import { log } from "../../shared/log";
import type { Counts } from "../../shared/counters";
import { isNewer, type EdgeChange } from "../../shared/edges";
import { backoffMs } from "../../shared/retries";
import type { Alarm } from "./alarm";
import type { MeteredStorage } from "./metered-storage";
import { MAX_SEND_BATCH, type CountSnapshot, type Emission, type Origin } from "../../shared/emissions";
import { edgeKey, EmissionOutbox, type EdgeRow } from "./emission-outbox";
import { packEmission } from "./emission-pack";
import type { StateRow } from "./state-row";
import { InFlight } from "./in-flight";
import { ACK_SWEEP_MS, EMIT_INTERVAL_MS } from "../../shared/object-windows";

/**
 * An emission not acknowledged after this long is sent again, and each further
 * resend of the same version waits twice as long, up to RESEND_CAP_MS: a slow
 * consumer (acks late, not lost) must not be buried under copies.
 */
const RESEND_AFTER_MS = 30_000;
const RESEND_CAP_MS = 5 * 60_000;
/** Backoff cap while sending itself fails (the queue is down). */
const RETRY_CAP_MS = 60_000;
/** Sent emissions are remembered this long, and this many at most, for their acks; a later ack only costs a resend. */
const IN_FLIGHT_TTL_MS = 10 * 60_000;
export const MAX_IN_FLIGHT = 1_000;

/**
 * Edges waiting for acknowledgement, at most: the outbox is a column of the
 * state row, which SQLite caps at 2 MB. Past it the owner's commit fails and its writers
 * retry (their own outboxes keep the changes, I3) until acknowledgements make
 * room: only a long outage of the aggregator on a busy object comes near.
 */
export const MAX_PENDING_EDGES = 10_000;

export type EmitterOptions = {
  /** The namespace the aggregator acknowledges through. */
  ns: Origin["ns"];
  /** The owner's storage holds the emitter's tables (false before its first write). */
  ready: () => boolean;
  /** The owner's state row, which holds the outbox (lib/emission-outbox.ts). */
  row: StateRow;
  /** The owner's object name (acks come back to it) and the item it counts for; null if unknown. */
  identity: () => { name: string; item: string } | null;
  /** The item's total counts: heads only. Children never emit counts, theirs are partial. */
  counts?: () => Counts;
  /** What a head's snapshot carries beyond its counts (its unique viewers). */
  snapshotExtras?: () => Omit<CountSnapshot, "seq" | "counts" | "at">;
  /** Called after a send from the timer: what the owner would otherwise have done in the alarm the send used to ride on. */
  sent?: () => Promise<void>;
};

export type EmissionState = {
  /** The count snapshot's sequence number (0: never changed). */
  seq: number;
  /** The newest snapshot the aggregator wrote to both stores and acknowledged. */
  ackedSeq: number;
  /** Edge changes not yet acknowledged. */
  pendingEdges: number;
};

/** The version last sent, when, and how many times in a row that version was sent. */
type Sent = { inc: number; seq: number; at: number; tries: number };


/**
 * The emission outbox of one object: what it must tell the aggregator, kept
 * until the aggregator has written it to both stores and acknowledged it.
 * Three columns of the owner's state row (lib/emission-outbox.ts), staged in the owner's commit and written once at its end.
 *
 * Costs no commit of its own while the object changes: changes are recorded
 * inside the owner's transaction (`record*`), acknowledgements are folded
 * into the owner's next transaction (`fold`), and sending runs from a timer,
 * at most once per EMIT_INTERVAL_MS; the object's alarm, set in the commit
 * that recorded the change, is the sweep (ACK_SWEEP_MS) and then the resend
 * time. Acknowledgements that no owner commit picks up are committed by the
 * sweep, so an idle object stores what ends its resends before it can be
 * evicted, and holds no timer meanwhile. A crash in between only means a
 * resend: the aggregator's writes are conditional on newer versions, so a
 * resend changes nothing.
 *
 * Usage in an object: call `fold()` and `record*()` inside its
 * `transactionSync`, `wake()` right after it (same turn, so the alarm rides on
 * the same commit), `ack()` from an RPC method, and `alarm()` from `alarm()`.
 */
export class Emitter {
  /** How long an emission may stay unacknowledged before it is resent; tests lower it. */
  resendAfterMs = RESEND_AFTER_MS;

  readonly #boot = crypto.randomUUID().slice(0, 8);
  #nextEmission = 0;
  #ackedSeq = 0;
  readonly #outbox: EmissionOutbox;
  #snapshotSent: Sent | null = null;
  #sentEdges = new Map<string, Sent>();
  readonly #inFlight = new InFlight(MAX_IN_FLIGHT, IN_FLIGHT_TTL_MS);
  #ackedEdges = new Map<string, EdgeRow>();
  /** Something changed since the last send. */
  #dirty = false;
  #attempt = 0;
  #sendTimer: ReturnType<typeof setTimeout> | undefined;
  #sendTimerAt = 0;
  /** Sends run one at a time (the timer's and the alarm's), so one version is not sent twice at once. */
  #sending: Promise<void> = Promise.resolve();
  #namelessLogged = false;

  constructor(
    ctx: DurableObjectState,
    private readonly storage: MeteredStorage,
    /** The object's one alarm: the emitter's sweep and resend times, and whether the emitter still needs it. */
    private readonly objectAlarm: Alarm,
    /** Sends an item's emissions on the queue that carries them (one of the deployment's Q queues). */
    private readonly send: (item: string, bodies: readonly Emission[]) => Promise<void>,
    private readonly options: EmitterOptions,
  ) {
    this.#outbox = new EmissionOutbox(storage.sql, options.row, options.ready);
    objectAlarm.register(() => !this.idle);
    this.#ackedSeq = this.#outbox.committed().ackedSeq;
    ctx.blockConcurrencyWhile(async () => {
      await storage.loadAlarm();
      // What was in flight lived in the last instance's memory, so an acknowledgement of it finds nothing to match here:
      // waiting for the stored resend time (30 s to minutes) would only delay the resend that ends it.
      if (this.#hasUnacked()) this.objectAlarm.request(Date.now() + EMIT_INTERVAL_MS);
    });
  }

  /** Nothing left to send or to hear back about: the emitter needs no alarm. */
  get idle(): boolean {
    return !this.#hasUnacked() && !this.#hasUnfolded();
  }

  /** Acknowledgements wait for a commit. */
  get unfolded(): boolean {
    return this.#hasUnfolded();
  }

  /** Inside the owner's transaction: persists what acknowledgements arrived since the last write. */
  fold(): void {
    if (this.#hasUnfolded()) {
      const outbox = this.#outbox.edit();
      for (const [key, row] of this.#ackedEdges) {
        const held = outbox.edges.get(key);
        // A newer version recorded since the send stays: only what the aggregator has leaves.
        if (held && held.inc === row.inc && held.seq === row.seq) outbox.edges.delete(key);
      }
      this.#ackedEdges.clear();
      outbox.ackedSeq = Math.max(outbox.ackedSeq, this.#ackedSeq);
    }
  }

  /**
   * Inside the owner's transaction: an edge change the owner accepted. An
   * older version never replaces a newer one still waiting to be sent.
   */
  recordEdge(user: string, change: Pick<EdgeChange, "counter" | "state" | "inc" | "seq" | "at">): void {
    const outbox = this.#outbox.edit();
    const key = edgeKey(user, change.counter);
    const held = outbox.edges.get(key);
    const row: EdgeRow = { user, counter: change.counter, state: change.state, inc: change.inc, seq: change.seq, at: change.at };
    if (held && !isNewer(row, held)) return;
    if (!held && outbox.edges.size >= MAX_PENDING_EDGES) {
      throw new Error(`emission outbox full: ${MAX_PENDING_EDGES} edges wait for the aggregator's acknowledgement`);
    }
    outbox.edges.set(key, row);
    this.#dirty = true;
  }

  /** Inside the head's transaction: its counts changed, so the snapshot gets a new sequence number. */
  recordCounts(): void {
    this.#outbox.edit().seq++;
    this.#dirty = true;
  }

  /** The edge has a change the aggregator has not acknowledged (inside a commit: this commit's view). */
  holds(user: string, counter: string): boolean {
    return this.#outbox.current().edges.has(edgeKey(user, counter));
  }

  /**
   * Right after the owner's transaction: sends what was recorded within
   * `delayMs`, from a timer. The alarm set here rides on the same commit: the
   * sweep, which stores the acknowledgements the burst's emissions get, then
   * the resend time, which sends again what a crash, an eviction or a lost
   * message leaves unacknowledged. So a burst of changes sets one alarm, not
   * one to send and another to resend.
   */
  wake(delayMs = EMIT_INTERVAL_MS): void {
    if (!this.#dirty) return;
    const now = Date.now();
    this.objectAlarm.request(now + Math.min(ACK_SWEEP_MS, this.resendAfterMs));
    if (this.#sendTimer !== undefined) {
      if (this.#sendTimerAt <= now + delayMs) return;
      clearTimeout(this.#sendTimer);
    }
    this.#sendTimerAt = now + delayMs;
    this.#sendTimer = setTimeout(() => {
      this.#sendTimer = undefined;
      this.#serialized(() => this.#send(Date.now()))
        .then(() => this.options.sent?.())
        .catch((error: unknown) => {
          log("error", "emission_failed", { error: String(error) });
          this.#attempt++;
          this.objectAlarm.request(Date.now() + EMIT_INTERVAL_MS + backoffMs(this.#attempt, EMIT_INTERVAL_MS, RETRY_CAP_MS));
        });
    }, delayMs);
  }

  /**
   * The aggregator wrote these emissions to both stores. Folded into the
   * owner's next commit, or the sweep's if none comes first.
   */
  ack(emissions: readonly string[]): void {
    for (const id of emissions) {
      const flight = this.#inFlight.take(id);
      if (!flight) continue;
      if (flight.snapshotSeq !== null) this.#ackedSeq = Math.max(this.#ackedSeq, flight.snapshotSeq);
      for (const row of flight.edges) {
        const key = edgeKey(row.user, row.counter);
        const known = this.#ackedEdges.get(key);
        if (!known || isNewer(row, known)) this.#ackedEdges.set(key, row);
        const sent = this.#sentEdges.get(key);
        if (sent && sent.inc === row.inc && sent.seq === row.seq) this.#sentEdges.delete(key);
      }
      this.#attempt = 0;
    }
    // An acknowledgement later than the burst's sweep (a slow aggregator, a resend's) brings a sweep of its own.
    if (this.#hasUnfolded()) this.objectAlarm.request(Date.now() + ACK_SWEEP_MS);
  }

  state(): EmissionState {
    return { seq: this.#seq(), ackedSeq: this.#ackedSeq, pendingEdges: this.#unackedEdges().length };
  }

  /**
   * Sends what is due: new changes, and emissions unacknowledged for too
   * long. Never throws: the platform gives up on an alarm after six failed
   * retries, so it catches everything and re-arms itself, with capped,
   * jittered backoff while sending fails, for as long as anything is unacked.
   */
  async alarm(): Promise<void> {
    let failed = false;
    try {
      if (this.options.ready() && this.#hasUnfolded()) this.storage.commit(() => this.fold());
      await this.#serialized(() => this.#send(Date.now()));
    } catch (error) {
      failed = true;
      log("error", "emission_failed", { error: String(error) });
    }
    try {
      if (this.idle) {
        this.#attempt = 0;
        return;
      }
      const now = Date.now();
      let at: number;
      if (failed) {
        this.#attempt++;
        at = now + EMIT_INTERVAL_MS + backoffMs(this.#attempt, EMIT_INTERVAL_MS, RETRY_CAP_MS);
      } else if (this.#dirty) {
        at = now + EMIT_INTERVAL_MS;
      } else {
        // Acknowledgements left unstored (they came during this run) have a sweep of their own asked by ack().
        const due = this.#hasUnacked() ? this.#nextDueAt() : now + ACK_SWEEP_MS;
        if (due > now) at = Math.max(due, now + EMIT_INTERVAL_MS);
        else {
          // Due and still unsent: the object cannot send yet (no name, no tables), so it backs off.
          this.#attempt++;
          at = now + this.resendAfterMs + backoffMs(this.#attempt, this.resendAfterMs, RESEND_CAP_MS);
        }
      }
      this.objectAlarm.request(at);
    } catch (error) {
      log("error", "emission_rearm_failed", { error: String(error) });
    }
  }

  /** When a change sent at `sent` falls due for a resend: each resend of one version waits twice as long; never sent, at once. */
  #dueAt(sent: Sent | null | undefined, inc: number, seq: number): number {
    if (!sent || sent.inc !== inc || sent.seq !== seq) return 0;
    return sent.at + Math.min(RESEND_CAP_MS, this.resendAfterMs * 2 ** (sent.tries - 1));
  }

  /** The first time anything unacknowledged falls due for a resend. */
  #nextDueAt(): number {
    let next = Infinity;
    for (const row of this.#unackedEdges()) next = Math.min(next, this.#dueAt(this.#sentEdges.get(edgeKey(row.user, row.counter)), row.inc, row.seq));
    const seq = this.#seq();
    if (this.options.counts !== undefined && seq > this.#ackedSeq) next = Math.min(next, this.#dueAt(this.#snapshotSent, 0, seq));
    return next;
  }

  async #send(now: number): Promise<void> {
    const identity = this.options.identity();
    if (!this.options.ready()) return;
    if (identity === null) {
      // Nothing can be sent, or acknowledged back, without the object's name: say so once, not silently forever.
      if (!this.#namelessLogged && this.#hasUnacked()) {
        log("error", "emission_identity_unknown", { ns: this.options.ns });
        this.#namelessLogged = true;
      }
      return;
    }
    this.#dirty = false;
    const due = (sent: Sent | null | undefined, inc: number, seq: number) => this.#dueAt(sent, inc, seq) <= now;
    const sentAgain = (sent: Sent | null | undefined, inc: number, seq: number): Sent => ({
      inc,
      seq,
      at: now,
      tries: sent && sent.inc === inc && sent.seq === seq ? sent.tries + 1 : 1,
    });
    const edges = this.#unackedEdges().filter((row) => due(this.#sentEdges.get(edgeKey(row.user, row.counter)), row.inc, row.seq));
    const counts = this.options.counts?.();
    const seq = this.#seq();
    const snapshotDue = counts !== undefined && seq > this.#ackedSeq && due(this.#snapshotSent, 0, seq);
    if (edges.length === 0 && !snapshotDue) return;

    this.#inFlight.expire(now);
    const messages = packEmission(
      { ns: this.options.ns, name: identity.name },
      identity.item,
      snapshotDue && counts ? { seq, counts, at: now, ...this.options.snapshotExtras?.() } : null,
      edges,
      () => `${this.#boot}.${++this.#nextEmission}`,
    );
    for (let i = 0; i < messages.length; i += MAX_SEND_BATCH) {
      const chunk = messages.slice(i, i + MAX_SEND_BATCH);
      await this.send(identity.item, chunk.map(({ body }) => body));
      for (const { body, rows } of chunk) {
        this.#inFlight.add(body.emission, { snapshotSeq: body.snapshot?.seq ?? null, edges: rows, at: now });
        if (body.snapshot) this.#snapshotSent = sentAgain(this.#snapshotSent, 0, body.snapshot.seq);
        for (const row of rows) {
          const key = edgeKey(row.user, row.counter);
          this.#sentEdges.set(key, sentAgain(this.#sentEdges.get(key), row.inc, row.seq));
        }
      }
    }
  }

  #serialized(send: () => Promise<void>): Promise<void> {
    const run = this.#sending.then(send);
    this.#sending = run.catch(() => undefined);
    return run;
  }

  #hasUnfolded(): boolean {
    return this.#ackedEdges.size > 0 || this.#ackedSeq > this.#outbox.committed().ackedSeq;
  }

  #unackedEdges(): EdgeRow[] {
    return [...this.#outbox.committed().edges.values()].filter((row) => {
      const acked = this.#ackedEdges.get(edgeKey(row.user, row.counter));
      return !acked || acked.inc !== row.inc || acked.seq !== row.seq;
    });
  }

  #hasUnacked(): boolean {
    return (this.options.counts !== undefined && this.#seq() > this.#ackedSeq) || this.#unackedEdges().length > 0;
  }

  /**
   * The snapshot's sequence as committed: a rolled back transaction must not
   * leave a sequence number behind that a later, different snapshot would reuse.
   */
  #seq(): number {
    return this.#outbox.committed().seq;
  }


}

