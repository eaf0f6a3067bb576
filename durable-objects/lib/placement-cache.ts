import type { Placement } from "../../shared/placement";

const COLD: Placement = { hot: false, shards: 0 };
const MAX_ITEMS = 10_000;
const cache = new Map<string, { placement: Placement; expiresAt: number }>();

/**
 * The shard maps this isolate's user objects learned from item heads, kept a
 * few seconds so a hot head is not asked on every write. An item not cached
 * is taken as cold: if it is hot, its head refuses the new edge and answers
 * with its placement, which is cached from then on.
 */
export function cachedPlacement(item: string, now: number): Placement {
  const entry = cache.get(item);
  return entry && entry.expiresAt > now ? entry.placement : COLD;
}

export function rememberPlacement(item: string, placement: Placement, ttlMs: number, now: number): void {
  cache.delete(item);
  cache.set(item, { placement, expiresAt: now + ttlMs });
  if (cache.size > MAX_ITEMS) cache.delete(cache.keys().next().value!);
}

/** Drops what this isolate knows of an item's placement (tests make a stale map this way). */
export function forgetPlacement(item: string): void {
  cache.delete(item);
}
