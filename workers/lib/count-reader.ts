import type { Counts } from "../../shared/counters";
import { withRetries } from "../../shared/retries";
import { CountCache, type CachedCounts } from "./count-cache";
import { itemCounter } from "./objects";

export type CountRead = CachedCounts & { cached: boolean };

/** Counts may be this old when served from an isolate's memory. */
const MEMORY_TTL_MS = 1_000;
const cache = new CountCache(MEMORY_TTL_MS);
const inflight = new Map<string, Promise<CachedCounts>>();

/**
 * An item's counts: from this isolate's cache when fresh, else from the item's
 * object, with concurrent reads of one item sharing one object call.
 */
export async function readCounts(env: Env, key: string): Promise<CountRead> {
  const now = Date.now();
  const hit = cache.fresh(key, now);
  if (hit) return { ...hit, cached: true };
  let call = inflight.get(key);
  if (!call) {
    call = withRetries(() => itemCounter(env, key).read())
      .then((snapshot) => {
        cache.put(key, snapshot, Date.now());
        return snapshot;
      })
      .finally(() => inflight.delete(key));
    inflight.set(key, call);
  }
  return { ...(await call), cached: false };
}

/** A user's own write updates what the isolate serves, so they see it at once. */
export function rememberCounts(key: string, counts: Counts, asOf = Date.now()): void {
  cache.put(key, { counts, asOf }, Date.now());
}

export function lastKnownCounts(key: string): CachedCounts | undefined {
  return cache.lastKnown(key);
}
