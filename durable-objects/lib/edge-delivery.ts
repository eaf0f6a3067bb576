import { log } from "../../shared/log";
import { config } from "../../shared/config";
import type { DeadlineClock } from "../../shared/deadline";
import type { ToggleCounter } from "../../shared/counters";
import type { EdgeChange } from "../../shared/edges";
import { USER_DELIVERY_DELAY_MS, USER_DELIVERY_TIMEOUT_MS } from "../../shared/own-writes";
import { homeFor } from "../../shared/placement";
import { settleAll } from "../../shared/settle";
import { metrics } from "../../metrics/recorder";
import { KeyedChain } from "./keyed-chain";
import type { MeteredStorage } from "./metered-storage";
import { applyAtHome, type CallDeadline } from "./object-calls";
import { rememberPlacement } from "./placement-cache";
import { keyOf, type EdgeRef, type UserOutbox } from "./user-outbox";

/** A change refused by a stale home is re-homed at most this many times per attempt. */
const MAX_REHOMES = 3;
/** Item objects an import call delivers to at once. */
const IMPORT_DELIVERY_CONCURRENCY = 8;

export interface DeliveryHost {
  env: Env;
  /** The object's deadline clock, for its calls to the item side. */
  clock: DeadlineClock;
  storage: MeteredStorage;
  outbox: UserOutbox;
  /** The user whose edges these are; null before the object's first write. */
  user(): string | null;
  /** A delivery failed: it stays in the outbox, and the object wakes to retry it. */
  failed(): void;
}

/**
 * Delivery of a user's edges to their homes on the item side (I3): what is
 * sent is the outbox's newest change of the edge, a refusal by a stale home
 * re-homes the edge (one commit) and sends it again, and a failure leaves it
 * in the outbox for the object's alarm.
 */
export class EdgeDelivery {
  readonly #locks = new KeyedChain();
  /** Edges whose delivery after an answer is waiting on its timer: one timer per edge, however often it changes meanwhile. */
  readonly #soon = new Set<string>();
  /**
   * Changes this instance enqueued and no send has taken yet, by edge: one
   * entry per edge in the outbox at most. A send carries the edge's newest
   * change, so its acknowledgement counts every change it overtook as
   * delivered: then enqueued minus delivered is what still waits, however
   * the changes were coalesced.
   */
  readonly #unsent = new Map<string, number>();
  /** Every delivery's deadline, on the object's clock. */
  readonly #deadline: CallDeadline;
  #imports: Promise<unknown> = Promise.resolve();

  constructor(private readonly host: DeliveryHost) {
    this.#deadline = { timeoutMs: USER_DELIVERY_TIMEOUT_MS, clock: host.clock };
  }

  /**
   * Delivers an edge's undelivered changes to its home. Deliveries of one
   * edge never overlap: a re-homing must not race a send to the old home, or
   * the edge could end up held by two homes. Resolves to false when the
   * delivery failed (the change waits in the outbox).
   */
  deliver(item: string, counter: ToggleCounter): Promise<boolean> {
    const key = keyOf({ item, counter });
    return this.#locks.run(key, () => this.#send(item, counter, key));
  }

  /**
   * A change just committed for an answer: delivered USER_DELIVERY_DELAY_MS
   * later, so the answer usually leaves before the item side's work starts.
   * A delivery sends the edge's newest change, so one waiting delivery
   * serves every change of the edge made before it begins.
   */
  deliverAfterAnswer(item: string, counter: ToggleCounter): void {
    const key = keyOf({ item, counter });
    this.#enqueue([key]);
    if (this.#soon.has(key)) return;
    this.#soon.add(key);
    setTimeout(() => {
      this.#soon.delete(key);
      void this.deliver(item, counter);
    }, USER_DELIVERY_DELAY_MS);
  }

  /** Every edge the item side has not acknowledged, at once; resolves to how many of those deliveries failed. */
  async redeliver(): Promise<number> {
    const sent = await Promise.all(this.host.outbox.undelivered().map((edge) => this.deliver(edge.item, edge.counter)));
    return sent.filter((delivered) => !delivered).length;
  }

  /**
   * An import's changed items, a few at a time, not all at once: with
   * `imported()` an importer then never has more item objects setting up their
   * storage than its calls in flight times this bound (thousands at once
   * exhausted the local runtime's SQLite memory).
   */
  deliverImported(items: readonly string[]): void {
    this.enqueued(items.map((item) => ({ item, counter: "likes" })));
    const delivering = settleAll([...new Set(items)], IMPORT_DELIVERY_CONCURRENCY, (item) => this.deliver(item, "likes"));
    // Resolved to nothing, so a long-lived object does not keep every import's results chained together.
    this.#imports = Promise.all([this.#imports, delivering]).then(() => undefined);
  }

  /** Resolves once every imported edge handed over so far was taken, or failed and waits in the outbox. */
  async imported(): Promise<void> {
    await this.#imports;
  }

  /** Changes whose commit held: counted as enqueued, and carried by the edge's next send. */
  enqueued(edges: readonly EdgeRef[]): void {
    this.#enqueue(edges.map(keyOf));
  }

  #enqueue(keys: readonly string[]): void {
    if (keys.length === 0) return;
    metrics.count("outbox_enqueued_total", { object: "user_likes" }, keys.length);
    for (const key of keys) this.#unsentMore(key, 1);
  }

  #unsentMore(key: string, changes: number): void {
    this.#unsent.set(key, (this.#unsent.get(key) ?? 0) + changes);
  }

  async #send(item: string, counter: ToggleCounter, key: string): Promise<boolean> {
    const { env, storage, outbox } = this.host;
    const user = this.host.user();
    // No user, no edges: an outbox entry here could not be sent, so it backs off rather than spins.
    if (user === null) return false;
    // The changes this send carries: every one made before it read the edge's newest change.
    let carried = 0;
    try {
      for (let attempt = 0; attempt < MAX_REHOMES; attempt++) {
        const due = outbox.due({ item, counter });
        if (due === null) return true;
        carried += this.#unsent.get(key) ?? 0;
        this.#unsent.delete(key);
        const { state, inc, seq, at, home } = due;
        const change: EdgeChange = { user, counter, state, inc, seq, at };
        const result = await applyAtHome(env, item, home, [change], "user_likes", this.#deadline);
        if (result.status === "applied") {
          outbox.delivered({ item, counter }, change);
          // Changes left by an earlier instance (a redelivery after a restart) count as one.
          metrics.count("outbox_delivered_total", { object: "user_likes" }, Math.max(carried, 1));
          return true;
        }
        rememberPlacement(item, result.placement, config(env).SHARD_MAP_TTL_MS, Date.now());
        // A handed-over edge names its child; a new edge on a hot item goes where its user hashes.
        const newHome = result.home ?? homeFor(user, result.placement);
        if (newHome === home) throw new Error(`home ${home} of ${item} refused its own edge`);
        // The one commit a stale shard map or a hand-over costs: the edge's new home is recorded before it is sent there.
        storage.commit(() => storage.sql.exec("UPDATE edges SET home = ? WHERE item = ? AND counter = ?", newHome, item, counter));
      }
      throw new Error(`${item} moved more than ${MAX_REHOMES} times in one delivery`);
    } catch (error) {
      if (carried > 0) this.#unsentMore(key, carried);
      log("error", "delivery_failed", { item, error: String(error) });
      this.host.failed();
      return false;
    }
  }
}
