/**
 * The items an isolate meets for the first time, seen from the load's side.
 * A like of an item the isolate has not met within PRIVACY_STALE_MS must
 * read the item's settings (and counts) from D1 before its answer
 * (workers/likes/write-settings.ts), so the number of such first sights in
 * a phase is the floor of its critical-path queries. A read that names an
 * item brings its settings too, but waits for them as a read, not on a
 * write's critical path: it makes the item met without counting. Locally one
 * isolate serves every request, so every request the load sends is one it meets.
 */
export class ItemSights {
  readonly #lastMet = new Map<string, number>();
  #countingSince: number | null = null;
  #counted = 0;

  constructor(private readonly staleMs: number) {}

  /** The load sent a request naming these items at `now`: a write (counted when it is a first sight) or a read. */
  meet(items: Iterable<string>, kind: "write" | "read", now = Date.now()): void {
    for (const item of items) {
      const last = this.#lastMet.get(item);
      const first = last === undefined || now - last >= this.staleMs;
      if (kind === "write" && first && this.#countingSince !== null && now >= this.#countingSince) this.#counted++;
      this.#lastMet.set(item, now);
    }
  }

  /** Counts first sights from `now` on. */
  countFrom(now = Date.now()): void {
    this.#countingSince = now;
    this.#counted = 0;
  }

  /** Stops counting; returns the first sights since `countFrom`. */
  stop(): number {
    this.#countingSince = null;
    return this.#counted;
  }
}
