import { RATE_DISPLAY_SECONDS, type RateView } from "./hot-policy";

/**
 * An item's write rate over sliding windows of whole seconds, in memory. Its
 * start is given, not taken: a hot head that wakes after an eviction starts
 * from its stored split time, so the seconds it was away count as seconds
 * without writes and the item does cool (a head that started measuring anew
 * on every wake would never see a whole cool window).
 */
export class WriteRate {
  readonly #buckets = new Map<number, number>();

  #since: number;

  constructor(
    since: number,
    private readonly keepSeconds: number,
  ) {
    this.#since = since;
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

  /**
   * The earliest time, `now` or later, at which the rate over `seconds` is
   * under `limit` if no write comes meanwhile: a second's writes leave the
   * window once it has slid past that second. A write that does come only
   * puts the time later. Null when the rate can never be under the limit.
   */
  underAt(limit: number, seconds: number, now: number): number | null {
    if (limit <= 0) return null;
    const current = Math.floor(now / 1000);
    const inside = [...this.#buckets].filter(([second]) => second > current - seconds).sort(([a], [b]) => a - b);
    let writes = inside.reduce((sum, [, n]) => sum + n, 0);
    let at = now;
    for (const [second, n] of inside) {
      if (writes / seconds < limit) break;
      writes -= n;
      // The first whole second whose window leaves this one out (a window of fractional seconds too).
      at = (second + Math.ceil(seconds)) * 1000;
    }
    return at;
  }

  /** The end of the last second a write was recorded in; null: none remembered. */
  lastWriteAt(): number | null {
    if (this.#buckets.size === 0) return null;
    return (Math.max(...this.#buckets.keys()) + 1) * 1000;
  }

  /** When this rate will have been measured for `seconds`. */
  measuredAt(seconds: number): number {
    return this.#since + seconds * 1000;
  }

  /** Writes in each of the last `seconds` whole seconds, oldest first; the current second is still filling. */
  lastSeconds(seconds: number, now: number): number[] {
    const current = Math.floor(now / 1000);
    return Array.from({ length: seconds }, (_, i) => this.#buckets.get(current - seconds + i) ?? 0);
  }

  /**
   * Measures from now on, the writes remembered kept: an item that just
   * turned hot cools only after a whole cool window from its split, as one
   * woken from its stored split time does.
   */
  restart(now: number): void {
    this.#since = now;
  }

  /** How long this rate has been measured: a window longer than that says nothing yet. */
  observedSeconds(now: number): number {
    return (now - this.#since) / 1000;
  }

  /** The rate as the hot/cool decision reads it. */
  view(now: number): RateView {
    return {
      observedSeconds: this.observedSeconds(now),
      perSecond: (seconds) => this.perSecond(seconds, now),
      lastSeconds: (seconds) => this.lastSeconds(seconds, now),
    };
  }

  /**
   * The rate shown to operators: over RATE_DISPLAY_SECONDS, or over every
   * second measuring has touched so far, the one it started in included (a
   * window of the elapsed time rounded up would leave out writes recorded
   * in that first second once the clock crossed into the next).
   */
  displayed(now: number): number {
    const touched = Math.floor(now / 1000) - Math.floor(this.#since / 1000) + 1;
    return this.perSecond(Math.min(RATE_DISPLAY_SECONDS, Math.max(1, touched)), now);
  }
}
