import { zeroCounts, type Counts } from "../../shared/counters";
import { config } from "../../shared/config";
import { ownWriteReachMs } from "../../shared/own-writes";
import { withRetries } from "../../shared/retries";
import { metrics } from "../../metrics/recorder";
import { CountCache, type CachedCounts } from "./count-cache";
import { edgeGet, edgeLastKnown, edgePut } from "./edge-cache";
import { itemCounter } from "../lib/objects";
import { rememberSettings } from "../privacy/item-settings";
import { readCountRows } from "../stores/item-counts";

/** What a read path needs from the request: bindings, and a way to work after the answer. */
export type Runtime = { env: Env; ctx: Pick<ExecutionContext, "waitUntil"> };

/**
 * `cached`: the value came from a cache tier. `stale`: the store failed and
 * this is the last known value. `firstRead`: no read had met the value before
 * this one (a store read, or an own write's entry), so an item with no row
 * would have answered `cached: false` as of `readAt`: what an item the viewer
 * may not see answers (routes/counts.ts).
 */
export type CountRead = CachedCounts & { readAt: number; cached: boolean; firstRead: boolean; stale: boolean };

const memory = new CountCache();

/**
 * How long a user's own write can outrank rows of the regional store in this
 * isolate: well past the pipeline's delay (docs/reads.md), so a user never
 * sees their like vanish and come back.
 */
const OWN_WRITE_PIN_MS = 10_000;

/** A store read in flight for an item; other requests wait for its outcome, not its promise. */
type Flight = { done: boolean; result?: CountRead };
const inflight = new Map<string, Flight>();
/** How often a request waiting on another's read looks at its outcome, and for how long at most. */
const FLIGHT_POLL_MS = 2;
const FLIGHT_WAIT_MS = 1_000;

function ttls(env: Env) {
  return { memoryMs: config(env).READ_CACHE_MEMORY_TTL_MS, edgeMs: config(env).READ_CACHE_EDGE_TTL_MS };
}

/**
 * Many items' counts: this isolate's memory, then the location's Cache API,
 * then one query per D1 database for everything still missing (a missing row
 * is zeros). No object is called. Concurrent misses for one item in one
 * isolate share one store read (single flight). An item the store cannot
 * read is served from the last known value (stale), else it is null.
 */
export async function readMany(
  rt: Runtime,
  keys: readonly string[],
  caller: string,
  /** A batch falls back on the Cache API's last-known copy; a single read asks the item's object first. */
  lastKnownCopy = true,
): Promise<Map<string, CountRead | null>> {
  const now = Date.now();
  const reads = new Map<string, CountRead | null>();
  const waiting: [string, Flight][] = [];
  const mine = new Map<string, Flight>();
  let hits = 0;
  for (const key of keys) {
    const hit = memory.fresh(key, now);
    const other = inflight.get(key);
    if (hit) {
      hits++;
      const firstRead = hit.readAt === null;
      memory.markRead(key, now);
      reads.set(key, { ...hit, readAt: hit.readAt ?? now, cached: true, firstRead, stale: false });
    } else if (other) {
      waiting.push([key, other]);
    } else {
      const flight: Flight = { done: false };
      inflight.set(key, flight);
      mine.set(key, flight);
    }
  }
  if (hits > 0) metrics.count("cache_lookups_total", { cache: "memory", result: "hit" }, hits);
  await Promise.all([
    loadOwn(rt, mine, caller, reads, lastKnownCopy),
    ...waiting.map(async ([key, flight]) => {
      const shared = await waitForFlight(flight);
      if (shared) metrics.count("cache_lookups_total", { cache: "flight", result: "hit" });
      reads.set(key, shared ? { ...shared, cached: true, firstRead: false } : lastKnownStale(key));
    }),
  ]);
  return reads;
}

/**
 * One item's counts, as `readMany` reads them. When the store cannot answer
 * and nothing is known of the item, one read is worth a call to the item's
 * object; only when that fails too does this throw.
 */
export async function readCounts(rt: Runtime, key: string, caller = "write_answer"): Promise<CountRead> {
  const read = (await readMany(rt, [key], caller, false)).get(key);
  if (read) return read;
  try {
    const read = await withRetries(async () => await itemCounter(rt.env, key, caller).read());
    // The object's own counts: taken when it answered.
    const snapshot = { ...read, countedAt: read.asOf, readAt: Date.now() };
    remember(rt, key, snapshot);
    return { ...snapshot, cached: false, firstRead: true, stale: false };
  } catch (error) {
    // The store and the object both failed: the location's last-known copy, if it has one.
    const lastKnown = await edgeLastKnownStale(key);
    if (lastKnown) return lastKnown;
    throw error;
  }
}

async function loadOwn(
  rt: Runtime,
  mine: Map<string, Flight>,
  caller: string,
  reads: Map<string, CountRead | null>,
  lastKnownCopy: boolean,
): Promise<void> {
  if (mine.size === 0) return;
  try {
    const loaded = await load(rt, [...mine.keys()], caller);
    const unknown = lastKnownCopy ? [...mine.keys()].filter((key) => !loaded.has(key) && !memory.lastKnown(key)) : [];
    const lastKnown = new Map(await Promise.all(unknown.map(async (key) => [key, await edgeLastKnownStale(key)] as const)));
    for (const [key, flight] of mine) {
      const read = loaded.get(key) ?? lastKnownStale(key) ?? lastKnown.get(key) ?? null;
      if (read && !read.stale) flight.result = read;
      reads.set(key, read);
    }
  } finally {
    for (const [key, flight] of mine) {
      flight.done = true;
      if (inflight.get(key) === flight) inflight.delete(key);
    }
  }
}

/**
 * Waits for another request's read of the same item by polling its outcome
 * with this request's own timers. workerd cancels a request whose only
 * pending work is a promise created by another request ("the Worker's code
 * had hung"), so requests share results, never promises. Returns undefined
 * when that read failed or took too long.
 */
async function waitForFlight(flight: Flight): Promise<CountRead | undefined> {
  const deadline = Date.now() + FLIGHT_WAIT_MS;
  while (!flight.done && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, FLIGHT_POLL_MS));
  }
  return flight.result;
}

/** The Cache API, then the regional store; items whose database failed are left out. */
async function load(rt: Runtime, keys: string[], caller: string): Promise<Map<string, CountRead>> {
  const tiers = ttls(rt.env);
  const reach = ownWriteReachMs(config(rt.env));
  const reads = new Map<string, CountRead>();
  let missing = keys;
  if (tiers.edgeMs > 0) {
    const edge = await Promise.all(keys.map((key) => edgeGet(key, Date.now())));
    const now = Date.now();
    missing = keys.filter((key, i) => {
      const hit = edge[i];
      if (!hit) return true;
      metrics.count("cache_lookups_total", { cache: "edge", result: "hit" });
      const readAt = hit.readAt ?? now;
      const value = { ...(outranking(key, hit, reach, now) ?? hit), readAt };
      memory.put(key, value, tiers.memoryMs, now);
      reads.set(key, { ...value, cached: true, firstRead: hit.readAt === null, stale: false });
      return false;
    });
  }
  if (missing.length === 0) return reads;
  metrics.count("cache_lookups_total", { cache: "all", result: "miss" }, missing.length);
  const { found, settings, failed } = await readCountRows(rt.env, missing, caller, config(rt.env).READ_STORE_TIMEOUT_MS);
  const unreadable = new Set(failed);
  const now = Date.now();
  // The same query read the items' settings: the privacy check that follows finds them in this isolate.
  for (const [key, itemSettings] of settings) rememberSettings(rt.env, key, itemSettings, now);
  for (const key of missing) {
    if (unreadable.has(key)) continue;
    const row = found.get(key);
    // An item with no row was never counted: zeros, as of now, taken at no known time.
    const stored = row
      ? { counts: row.counts, asOf: row.asOf, countedAt: row.countedAt, readAt: now }
      : { counts: zeroCounts(), asOf: now, countedAt: 0, readAt: now };
    const own = outranking(key, stored, reach, now);
    if (own) {
      memory.put(key, { ...own, readAt: now }, tiers.memoryMs, now);
      reads.set(key, { ...own, readAt: now, cached: true, firstRead: true, stale: false });
    } else {
      remember(rt, key, stored, 0, tiers, now);
      reads.set(key, { ...stored, cached: false, firstRead: true, stale: false });
    }
  }
  return reads;
}

/**
 * The user's own write this isolate pinned, when `value` may not hold it yet:
 * judged by when the value's counts were taken, not when it was stored (a row
 * stored after the write can hold counts the head took before the write
 * reached it, docs/reads.md), so a user never sees their like vanish.
 */
function outranking(key: string, value: CachedCounts, reachMs: number, now: number): CachedCounts | undefined {
  const own = memory.pinned(key, now);
  if (!own || (value.countedAt ?? 0) >= own.pin.writtenAt + reachMs) return undefined;
  return { counts: own.counts, asOf: own.asOf, countedAt: own.countedAt };
}

function lastKnownStale(key: string): CountRead | null {
  const known = memory.lastKnown(key);
  return known ? { ...known, readAt: known.readAt ?? Date.now(), cached: true, firstRead: known.readAt === null, stale: true } : null;
}

/** The Cache API's long-lived copy, when this isolate knows nothing of the item and its store failed. */
async function edgeLastKnownStale(key: string): Promise<CountRead | null> {
  const known = await edgeLastKnown(key);
  if (!known) return null;
  metrics.count("cache_lookups_total", { cache: "last_known", result: "hit" });
  return { ...known, readAt: known.readAt ?? Date.now(), cached: true, firstRead: known.readAt === null, stale: true };
}

/** `tiers` and `now` let a batch read every item's TTLs and time once. */
function remember(rt: Runtime, key: string, value: CachedCounts, pinMs = 0, { memoryMs, edgeMs } = ttls(rt.env), now = Date.now()): void {
  memory.put(key, value, memoryMs, now, pinMs);
  const writing = edgeMs > 0 ? edgePut(key, value, edgeMs, now, config(rt.env).LAST_KNOWN_CACHE_SECONDS) : undefined;
  if (writing) rt.ctx.waitUntil(writing);
}

/** A user's own write overwrites both cache tiers, so they see it at once, and outranks older store rows. */
export function rememberCounts(rt: Runtime, key: string, counts: Counts): void {
  const now = Date.now();
  remember(rt, key, { counts, asOf: now, countedAt: now }, OWN_WRITE_PIN_MS, ttls(rt.env), now);
}

/** The last counts this isolate saw for the item, fresh or not. */
export function lastKnownCounts(key: string): CachedCounts | undefined {
  return memory.lastKnown(key);
}

/** Adds this isolate's own event to what it serves, before the event reaches the item. */
export function bumpCounts(rt: Runtime, key: string, counter: keyof Counts, by: number): Counts {
  const counts = { ...(memory.lastKnown(key)?.counts ?? zeroCounts()) };
  counts[counter] += by;
  rememberCounts(rt, key, counts);
  return counts;
}
