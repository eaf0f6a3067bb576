import type { Counts } from "../../shared/counters";

/**
 * `readAt`: when a read first brought the value here (from the store, the
 * Cache API or the item's object); null while it is only a user's own write
 * that no read has met yet. An item with no row has `asOf` equal to it, so it
 * is what an item a viewer may not see answers as its `as_of`, and an entry no
 * read has met is one an untouched item would not have.
 */
export type CachedCounts = { counts: Counts; asOf: number; readAt?: number | null };

type Entry = CachedCounts & { readAt: number | null; expiresAt: number; pinnedUntil: number };

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

  fresh(key: string, now: number): Entry | undefined {
    const entry = this.#entries.get(key);
    return entry && entry.expiresAt > now ? entry : undefined;
  }

  lastKnown(key: string): Entry | undefined {
    return this.#entries.get(key);
  }

  /** The entry of a recent own write, while its pin holds. */
  pinned(key: string, now: number): Entry | undefined {
    const entry = this.#entries.get(key);
    return entry && entry.pinnedUntil > now ? entry : undefined;
  }

  /** A read met the entry: from now on it is one an untouched item would have too. */
  markRead(key: string, now: number): void {
    const entry = this.#entries.get(key);
    if (entry && entry.readAt === null) entry.readAt = now;
  }

  /** Stores a value; `pinMs` pins it (an own write), otherwise an existing pin is kept. */
  put(key: string, value: CachedCounts, ttlMs: number, now: number, pinMs = 0): void {
    const pinnedUntil = pinMs > 0 ? now + pinMs : (this.#entries.get(key)?.pinnedUntil ?? 0);
    this.#entries.delete(key);
    this.#entries.set(key, { counts: { ...value.counts }, asOf: value.asOf, readAt: value.readAt ?? null, expiresAt: now + ttlMs, pinnedUntil });
    if (this.#entries.size > MAX_ENTRIES) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }
}
