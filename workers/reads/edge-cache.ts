import type { CachedCounts } from "./count-cache";

/**
 * The location-wide tier of the read cache: the Cache API, shared by every
 * isolate of one Cloudflare location. In production it works only on a custom
 * domain (on workers.dev it stores nothing), so it is an optimisation, never
 * a source of truth: every failure here is a miss.
 * One entry per item serves twice: fresh until its `expiresAt`, and kept by
 * the cache far longer (`keepSeconds`) as the item's last-known counts for
 * when every store fails, at no extra write.
 */
const cacheUrl = (key: string) => `https://counts.plaudit.internal/v1/${encodeURIComponent(key)}`;

type Stored = CachedCounts & { expiresAt: number };

/** An entry as read back; one without `readAt` is an own write no read has met (count-cache.ts). */
const cached = (stored: Stored): CachedCounts => ({ counts: stored.counts, asOf: stored.asOf, countedAt: stored.countedAt, readAt: stored.readAt ?? null });

async function lookup(key: string): Promise<Stored | undefined> {
  try {
    const response = await caches.default.match(cacheUrl(key));
    return response ? ((await response.json()) as Stored) : undefined;
  } catch {
    return undefined;
  }
}

/** The item's counts if the entry is still fresh. */
export async function edgeGet(key: string, now: number): Promise<CachedCounts | undefined> {
  const stored = await lookup(key);
  return stored && stored.expiresAt > now ? cached(stored) : undefined;
}

/** The item's last-known counts, however old: only for when every store fails. */
export async function edgeLastKnown(key: string): Promise<CachedCounts | undefined> {
  const stored = await lookup(key);
  return stored ? cached(stored) : undefined;
}

const queued = new Map<string, { stored: Stored; keepSeconds: number }>();
const writing = new Set<string>();

/**
 * Stores the newest value for an item. Writes are coalesced per item: while
 * one is in flight, later values only replace what it writes next, so a burst
 * of views on one item costs a few cache writes, not one each. Returns the
 * writer's promise (for waitUntil) when this call started one.
 */
export function edgePut(key: string, value: CachedCounts, ttlMs: number, now: number, keepSeconds: number): Promise<void> | undefined {
  queued.set(key, { stored: { ...value, readAt: value.readAt ?? null, expiresAt: now + ttlMs }, keepSeconds });
  if (writing.has(key)) return undefined;
  writing.add(key);
  return (async () => {
    try {
      for (let next = queued.get(key); next; next = queued.get(key)) {
        queued.delete(key);
        await write(key, next.stored, next.keepSeconds);
      }
    } finally {
      writing.delete(key);
    }
  })();
}

async function write(key: string, stored: Stored, keepSeconds: number): Promise<void> {
  try {
    await caches.default.put(
      cacheUrl(key),
      new Response(JSON.stringify(stored), {
        headers: {
          "content-type": "application/json",
          "cache-control": `max-age=${Math.ceil(keepSeconds)}`,
        },
      }),
    );
  } catch {
    // A cache that cannot store is a cache that misses.
  }
}
