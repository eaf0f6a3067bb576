import type { CachedCounts } from "./count-cache";

/**
 * The location-wide tier of the read cache: the Cache API, shared by every
 * isolate of one Cloudflare location. In production it works only on a custom
 * domain (on workers.dev it stores nothing), so it is an optimisation, never
 * a source of truth: every failure here is a miss.
 */
const cacheUrl = (key: string) => `https://counts.plaudit.internal/v1/${encodeURIComponent(key)}`;

type Stored = CachedCounts & { expiresAt: number };

export async function edgeGet(key: string, now: number): Promise<CachedCounts | undefined> {
  try {
    const response = await caches.default.match(cacheUrl(key));
    if (!response) return undefined;
    const stored = (await response.json()) as Stored;
    return stored.expiresAt > now ? { counts: stored.counts, asOf: stored.asOf } : undefined;
  } catch {
    return undefined;
  }
}

const queued = new Map<string, { stored: Stored; ttlMs: number }>();
const writing = new Set<string>();

/**
 * Stores the newest value for an item. Writes are coalesced per item: while
 * one is in flight, later values only replace what it writes next, so a burst
 * of views on one item costs a few cache writes, not one each. Returns the
 * writer's promise (for waitUntil) when this call started one.
 */
export function edgePut(key: string, value: CachedCounts, ttlMs: number, now: number): Promise<void> | undefined {
  queued.set(key, { stored: { ...value, expiresAt: now + ttlMs }, ttlMs });
  if (writing.has(key)) return undefined;
  writing.add(key);
  return (async () => {
    try {
      for (let next = queued.get(key); next; next = queued.get(key)) {
        queued.delete(key);
        await write(key, next.stored, next.ttlMs);
      }
    } finally {
      writing.delete(key);
    }
  })();
}

async function write(key: string, stored: Stored, ttlMs: number): Promise<void> {
  try {
    await caches.default.put(
      cacheUrl(key),
      new Response(JSON.stringify(stored), {
        headers: {
          "content-type": "application/json",
          "cache-control": `max-age=${Math.max(1, Math.ceil(ttlMs / 1000))}`,
        },
      }),
    );
  } catch {
    // A cache that cannot store is a cache that misses.
  }
}
