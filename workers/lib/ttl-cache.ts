/**
 * A per-isolate map whose entries expire, bounded so that requests naming
 * random ids cannot grow an isolate's memory without limit (the oldest entry
 * goes first). A cache, never a source of truth: a miss reads the source
 * again. Expired entries stay until pushed out, as the last known value
 * (`within`, `lastKnown`), for owners to whom a stale value is better than
 * none; an owner to whom it is not reads only with `get`.
 */
export class TtlCache<V> {
  readonly #entries = new Map<string, { value: V; expiresAt: number; writtenAt: number }>();

  constructor(readonly maxEntries: number) {}

  get(key: string, now: number): V | undefined {
    const entry = this.#entries.get(key);
    return entry && entry.expiresAt > now ? entry.value : undefined;
  }

  /** The value, expired or not, if it was written less than `maxAgeMs` ago, and whether it is still fresh. */
  within(key: string, now: number, maxAgeMs: number): { value: V; fresh: boolean } | undefined {
    const entry = this.#entries.get(key);
    return entry && now - entry.writtenAt < maxAgeMs ? { value: entry.value, fresh: entry.expiresAt > now } : undefined;
  }

  /** The value even when expired: what to serve when D1 cannot answer. */
  lastKnown(key: string): V | undefined {
    return this.#entries.get(key)?.value;
  }

  put(key: string, value: V, ttlMs: number, now: number): void {
    this.#entries.delete(key);
    this.#entries.set(key, { value, expiresAt: now + ttlMs, writtenAt: now });
    if (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }
}
