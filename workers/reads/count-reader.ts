import { zeroCounts, type Counts } from "../../shared/counters";
import { config } from "../../shared/config";
import { withRetries } from "../../shared/retries";
import { metrics } from "../../metrics/recorder";
import { CountCache, type CachedCounts } from "./count-cache";
import { edgeGet, edgeLastKnown, edgePut } from "./edge-cache";
import { itemCounter } from "../lib/objects";
import { rememberSettings } from "../privacy/item-settings";
import { readCountRows } from "../stores/item-counts";
import type { QueryPath } from "../stores/d1";

/** What a read path needs from the request: bindings, and a way to work after the answer. */
export type Runtime = { env: Env; ctx: Pick<ExecutionContext, "waitUntil"> };

/** `cached`: the value came from a cache tier. `stale`: the store failed and this is the last known value. */
export type CountRead = CachedCounts & { cached: boolean; stale: boolean };

const memory = new CountCache();

/**
 * How long a user's own write outranks older rows of the regional store in
 * this isolate: well past the pipeline's delay (docs/reads.md), so a user
 * never sees their like vanish and come back.
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
  path?: QueryPath,
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
      reads.set(key, { ...hit, cached: true, stale: false });
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
    loadOwn(rt, mine, caller, reads, lastKnownCopy, path),
    ...waiting.map(async ([key, flight]) => {
      const shared = await waitForFlight(flight);
      if (shared) metrics.count("cache_lookups_total", { cache: "flight", result: "hit" });
      reads.set(key, shared ? { ...shared, cached: true } : lastKnownStale(key));
    }),
  ]);
  return reads;
}

/**
 * One item's counts, as `readMany` reads them. When the store cannot answer
 * and nothing is known of the item, one read is worth a call to the item's
 * object; only when that fails too does this throw.
 */
export async function readCounts(rt: Runtime, key: string, caller = "write_answer", path?: QueryPath): Promise<CountRead> {
  const read = (await readMany(rt, [key], caller, false, path)).get(key);
  if (read) return read;
  try {
    const snapshot = await withRetries(async () => await itemCounter(rt.env, key, caller).read());
    remember(rt, key, snapshot);
    return { ...snapshot, cached: false, stale: false };
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
  path?: QueryPath,
): Promise<void> {
  if (mine.size === 0) return;
  try {
    const loaded = await load(rt, [...mine.keys()], caller, path);
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
async function load(rt: Runtime, keys: string[], caller: string, path?: QueryPath): Promise<Map<string, CountRead>> {
  const tiers = ttls(rt.env);
  const { memoryMs, edgeMs } = tiers;
  const reads = new Map<string, CountRead>();
  let missing = keys;
  if (edgeMs > 0) {
    const edge = await Promise.all(keys.map((key) => edgeGet(key, Date.now())));
    missing = keys.filter((key, i) => {
      const hit = edge[i];
      if (!hit) return true;
      metrics.count("cache_lookups_total", { cache: "edge", result: "hit" });
      memory.put(key, hit, memoryMs, Date.now());
      reads.set(key, { ...hit, cached: true, stale: false });
      return false;
    });
  }
  if (missing.length === 0) return reads;
  metrics.count("cache_lookups_total", { cache: "all", result: "miss" }, missing.length);
  const { found, settings, failed } = await readCountRows(rt.env, missing, caller, config(rt.env).READ_STORE_TIMEOUT_MS, path);
  const unreadable = new Set(failed);
  const now = Date.now();
  // The same query read the items' settings: the privacy check that follows finds them in this isolate.
  for (const [key, itemSettings] of settings) rememberSettings(rt.env, key, itemSettings, now);
  for (const key of missing) {
    if (unreadable.has(key)) continue;
    const stored = found.get(key) ?? { counts: zeroCounts(), asOf: 0 };
    const own = memory.pinned(key, now);
    if (own && own.asOf >= stored.asOf) {
      memory.put(key, own, memoryMs, now);
      reads.set(key, { ...own, cached: true, stale: false });
    } else {
      const value = { counts: stored.counts, asOf: stored.asOf || now };
      remember(rt, key, value, 0, tiers, now);
      reads.set(key, { ...value, cached: false, stale: false });
    }
  }
  return reads;
}

function lastKnownStale(key: string): CountRead | null {
  const known = memory.lastKnown(key);
  return known ? { ...known, cached: true, stale: true } : null;
}

/** The Cache API's long-lived copy, when this isolate knows nothing of the item and its store failed. */
async function edgeLastKnownStale(key: string): Promise<CountRead | null> {
  const known = await edgeLastKnown(key);
  if (!known) return null;
  metrics.count("cache_lookups_total", { cache: "last_known", result: "hit" });
  return { ...known, cached: true, stale: true };
}

/** `tiers` and `now` let a batch read every item's TTLs and time once. */
function remember(rt: Runtime, key: string, value: CachedCounts, pinMs = 0, { memoryMs, edgeMs } = ttls(rt.env), now = Date.now()): void {
  memory.put(key, value, memoryMs, now, pinMs);
  const writing = edgeMs > 0 ? edgePut(key, value, edgeMs, now, config(rt.env).LAST_KNOWN_CACHE_SECONDS) : undefined;
  if (writing) rt.ctx.waitUntil(writing);
}

/** A user's own write overwrites both cache tiers, so they see it at once, and outranks older store rows. */
export function rememberCounts(rt: Runtime, key: string, counts: Counts): void {
  remember(rt, key, { counts, asOf: Date.now() }, OWN_WRITE_PIN_MS);
}

/** The counts this isolate holds fresh for the item, if any. */
export function freshCounts(key: string): CachedCounts | undefined {
  return memory.fresh(key, Date.now());
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
