import type { Counts } from "../../shared/counters";

/**
 * `asOf`: when the value was stored (or read); `countedAt`: when its counts
 * were taken (the head's snapshot time, a user's own write), absent when unknown.
 * `readAt`: when a read first brought the value here (from the store, the
 * Cache API or the item's object); null while it is only a user's own write
 * that no read has met yet. An item with no row has `asOf` equal to it, so it
 * is what an item a viewer may not see answers as its `as_of`, and an entry no
 * read has met is one an untouched item would not have.
 */
export type CachedCounts = { counts: Counts; asOf: number; countedAt?: number; readAt?: number | null };

/** A user's own write in this isolate: when it was answered, and until when it outranks the store. */
export type Pin = { writtenAt: number; until: number };

type Entry = CachedCounts & { readAt: number | null; expiresAt: number; pin: Pin | null };

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

  /** The entry of a recent own write and its pin, while the pin holds. */
  pinned(key: string, now: number): (CachedCounts & { pin: Pin }) | undefined {
    const entry = this.#entries.get(key);
    return entry?.pin && entry.pin.until > now ? { counts: entry.counts, asOf: entry.asOf, countedAt: entry.countedAt, readAt: entry.readAt, pin: entry.pin } : undefined;
  }

  /** A read met the entry: from now on it is one an untouched item would have too. */
  markRead(key: string, now: number): void {
    const entry = this.#entries.get(key);
    if (entry && entry.readAt === null) entry.readAt = now;
  }

  /**
   * Stores a value; `pinMs` pins it (an own write answered at `now`),
   * otherwise an existing pin is kept with the time of the write it pins.
   */
  put(key: string, value: CachedCounts, ttlMs: number, now: number, pinMs = 0): void {
    const pin = pinMs > 0 ? { writtenAt: now, until: now + pinMs } : (this.#entries.get(key)?.pin ?? null);
    this.#entries.delete(key);
    this.#entries.set(key, { counts: { ...value.counts }, asOf: value.asOf, countedAt: value.countedAt, readAt: value.readAt ?? null, expiresAt: now + ttlMs, pin });
    if (this.#entries.size > MAX_ENTRIES) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }
}
