/**
 * An item's write rate over sliding windows of whole seconds, in memory: a
 * head that restarts forgets it and starts measuring again, which only delays
 * a split or a merge (the hot state itself is persisted).
 */
export class WriteRate {
  readonly #buckets = new Map<number, number>();
  readonly #since: number;

  constructor(now: number, private readonly keepSeconds: number) {
    this.#since = now;
  }

  record(writes: number, now: number): void {
    if (writes <= 0) return;
    const second = Math.floor(now / 1000);
    this.#buckets.set(second, (this.#buckets.get(second) ?? 0) + writes);
    for (const s of this.#buckets.keys()) {
      if (s > second - this.keepSeconds) break;
      this.#buckets.delete(s);
    }
  }

  /** Writes per second over the last `seconds` seconds, the current one included. */
  perSecond(seconds: number, now: number): number {
    const current = Math.floor(now / 1000);
    let sum = 0;
    for (const [second, writes] of this.#buckets) {
      if (second > current - seconds) sum += writes;
    }
    return sum / seconds;
  }

  /** How long this object has been measuring: a window longer than that says nothing yet. */
  observedSeconds(now: number): number {
    return (now - this.#since) / 1000;
  }
}
