import type { Counts } from "../../shared/counters";

export type CachedCounts = { counts: Counts; asOf: number };

type Entry = CachedCounts & { expiresAt: number };

/** Bounded so a scan over random ids cannot grow an isolate's memory without limit. */
const MAX_ENTRIES = 10_000;

/**
 * The per-isolate tier of the read cache. Entries stay after they expire as
 * the "last known" value: a like's answer when the item side is slow, and a
 * stale answer when the item's object fails.
 */
export class CountCache {
  readonly #entries = new Map<string, Entry>();

  fresh(key: string, now: number): CachedCounts | undefined {
    const entry = this.#entries.get(key);
    return entry && entry.expiresAt > now ? entry : undefined;
  }

  lastKnown(key: string): CachedCounts | undefined {
    return this.#entries.get(key);
  }

  put(key: string, value: CachedCounts, ttlMs: number, now: number): void {
    this.#entries.delete(key);
    this.#entries.set(key, { counts: { ...value.counts }, asOf: value.asOf, expiresAt: now + ttlMs });
    if (this.#entries.size > MAX_ENTRIES) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }
}
