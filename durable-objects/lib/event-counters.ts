import type { Counts, EventCounter } from "../../shared/counters";
import type { EventBatch } from "../../shared/contracts";
import type { Sql } from "./metered-storage";

const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** Expired idempotency keys are pruned a bounded number at a time, inside commits that happen anyway. */
const PRUNE_BATCH = 500;

/**
 * An item's plain event counts (views, shares): sums, each event sent with an
 * Idempotency-Key counted once per key within 24 hours. Events are added in
 * memory and persisted with the head's next commit (the head asks for one
 * shortly after): a crash may lose that last fraction of a second of views,
 * a trade-off likes and saves never take.
 */
export class EventCounters {
  #dirty = false;
  #pendingKeys = new Map<string, number>();

  constructor(
    private readonly sql: Sql,
    private readonly ready: () => boolean,
  ) {}

  /** Something waits for a commit. */
  get pending(): boolean {
    return this.#dirty || this.#pendingKeys.size > 0;
  }

  /** Adds a Worker isolate's batch to `counts`; returns whether anything was counted. */
  add(counts: Counts, batch: EventBatch, now: number): boolean {
    const before = this.pending;
    for (const [counter, n] of Object.entries(batch.counts) as [EventCounter, number][]) {
      if (n > 0) {
        counts[counter] += n;
        this.#dirty = true;
      }
    }
    for (const { counter, key } of batch.keyed) {
      if (this.#seen(key, now)) continue;
      this.#pendingKeys.set(key, now + IDEMPOTENCY_WINDOW_MS);
      counts[counter] += 1;
      this.#dirty = true;
    }
    return this.pending && !before;
  }

  /** Inside the head's transaction: the idempotency keys gathered since the last commit. */
  write(now: number): void {
    if (this.#pendingKeys.size === 0) return;
    for (const [key, expiresAt] of this.#pendingKeys) {
      this.sql.exec("INSERT OR REPLACE INTO idempotency_keys (key, expires_at) VALUES (?, ?)", key, expiresAt);
    }
    this.sql.exec(
      "DELETE FROM idempotency_keys WHERE key IN (SELECT key FROM idempotency_keys WHERE expires_at <= ? LIMIT ?)",
      now,
      PRUNE_BATCH,
    );
  }

  /** After the head's transaction committed. */
  committed(): void {
    this.#dirty = false;
    this.#pendingKeys.clear();
  }

  #seen(key: string, now: number): boolean {
    if (this.#pendingKeys.has(key)) return true;
    if (!this.ready()) return false;
    return this.sql.exec("SELECT 1 FROM idempotency_keys WHERE key = ? AND expires_at > ?", key, now).toArray().length > 0;
  }
}
