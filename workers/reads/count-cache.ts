import type { Counts } from "../../shared/counters";

export type CachedCounts = { counts: Counts; asOf: number };

type Entry = CachedCounts & { expiresAt: number; pinnedUntil: number };

/** Bounded so a scan over random ids cannot grow an isolate's memory without limit. */
const MAX_ENTRIES = 10_000;

/**
 * The per-isolate tier of the read cache. Entries stay after they expire as
 * the "last known" value: a like's answer when the item side is slow, and a
 * stale answer when the regional store fails. An entry written by a user's own
 * action is pinned for a while: a store row older than it does not replace it,
 * so the user keeps seeing their write while the pipeline catches up.
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

  /** The entry of a recent own write, while its pin holds. */
  pinned(key: string, now: number): CachedCounts | undefined {
    const entry = this.#entries.get(key);
    return entry && entry.pinnedUntil > now ? entry : undefined;
  }

  /** Stores a value; `pinMs` pins it (an own write), otherwise an existing pin is kept. */
  put(key: string, value: CachedCounts, ttlMs: number, now: number, pinMs = 0): void {
    const pinnedUntil = pinMs > 0 ? now + pinMs : (this.#entries.get(key)?.pinnedUntil ?? 0);
    this.#entries.delete(key);
    this.#entries.set(key, { counts: { ...value.counts }, asOf: value.asOf, expiresAt: now + ttlMs, pinnedUntil });
    if (this.#entries.size > MAX_ENTRIES) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }
}
