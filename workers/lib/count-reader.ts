import type { Counts } from "../../shared/counters";
import { withRetries } from "../../shared/retries";
import { CountCache, type CachedCounts } from "./count-cache";
import { itemCounter } from "./objects";

export type CountRead = CachedCounts & { cached: boolean };

/** Counts may be this old when served from an isolate's memory. */
const MEMORY_TTL_MS = 1_000;
const cache = new CountCache(MEMORY_TTL_MS);

/**
 * An item's counts: from this isolate's cache when fresh, else from the item's
 * object. Concurrent requests do not share one in-flight object call: workerd
 * cancels a request that waits only on a promise another request created
 * ("the Worker's code had hung"), which is what feeds under load hit.
 */
export async function readCounts(env: Env, key: string): Promise<CountRead> {
  const hit = cache.fresh(key, Date.now());
  if (hit) return { ...hit, cached: true };
  const snapshot = await withRetries(() => itemCounter(env, key).read());
  cache.put(key, snapshot, Date.now());
  return { ...snapshot, cached: false };
}

/** A user's own write updates what the isolate serves, so they see it at once. */
export function rememberCounts(key: string, counts: Counts, asOf = Date.now()): void {
  cache.put(key, { counts, asOf }, Date.now());
}

export function lastKnownCounts(key: string): CachedCounts | undefined {
  return cache.lastKnown(key);
}
