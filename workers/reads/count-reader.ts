import { zeroCounts, type Counts } from "../../shared/counters";
import { config } from "../../shared/config";
import { ownWriteReachMs } from "../../shared/own-writes";
import { withRetries } from "../../shared/retries";
import { metrics } from "../../metrics/recorder";
import { CountCache, type CachedCounts } from "./count-cache";
import { edgeGet, edgeLastKnown, edgePut } from "./edge-cache";
import { itemCounter } from "../lib/objects";
import { rememberSettings } from "../privacy/item-settings";
import { longestReadMs, readCountRows } from "../stores/item-counts";
import { MAX_BATCH_ITEMS } from "../../shared/schemas";
import { Flights, waitForFlights, type Flight } from "./flights";
import type { QueryPath } from "../stores/d1";

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

/**
 * At most one store read per item in this isolate at a time. One read asks
 * for at most as many items as one feed may name, so it keeps a feed's store
 * round trips (item-counts.ts).
 */
const flights = new Flights<CountRead>(MAX_BATCH_ITEMS);

/** The turn a read waits for others to join it, and the start of its query, beyond its trips' own bounds. */
const FLIGHT_SLACK_MS = 250;

/**
 * How long a request waits on reads others have in flight. A like's answer
 * (the critical path) waits as long as a read of its own could take in one
 * trip. Any other read waits as long as the read it waits on can take
 * (longestReadMs), so a request that joined a read is answered as its
 * reader is, fresh, when the central store is slow and the databases answer.
 */
function flightWaitMs(env: Env, path?: QueryPath): number {
  const trip = config(env).READ_STORE_TIMEOUT_MS;
  return path === "critical" ? trip : longestReadMs(trip) + FLIGHT_SLACK_MS;
}

function ttls(env: Env) {
  return { memoryMs: config(env).READ_CACHE_MEMORY_TTL_MS, edgeMs: config(env).READ_CACHE_EDGE_TTL_MS };
}

/**
 * Many items' counts: this isolate's memory, then the location's Cache API,
 * then one query per D1 database for everything still missing (a missing row
 * is zeros). No object is called. An item another request of this isolate is
 * reading is waited for, and the misses of requests that reach the store
 * together go in one read (flights.ts). An item the store cannot read is
 * served from the last known value (stale), else it is null.
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
  const waiting: [string, Flight<CountRead>][] = [];
  const mine = new Map<string, Flight<CountRead>>();
  let hits = 0;
  for (const key of keys) {
    const hit = memory.fresh(key, now);
    const other = flights.find(key);
    if (hit) {
      hits++;
      const firstRead = hit.readAt === null;
      memory.markRead(key, now);
      reads.set(key, { ...hit, readAt: hit.readAt ?? now, cached: true, firstRead, stale: false });
    } else if (other) {
      waiting.push([key, other]);
    } else {
      mine.set(key, flights.claim(key));
    }
  }
  if (hits > 0) metrics.count("cache_lookups_total", { cache: "memory", result: "hit" }, hits);
  await Promise.all([readOwn(rt, mine, caller, reads, lastKnownCopy, path), waitForOthers(rt.env, waiting, reads, lastKnownCopy, path)]);
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

/**
 * The items this request claimed: the Cache API's hits, then the rest from the
 * store, in a read of its own or in one another request is about to send (its
 * reader then answers for them). Reads of another caller or path are not
 * joined: each read's queries are counted by its caller and path.
 */
async function readOwn(
  rt: Runtime,
  mine: ReadonlyMap<string, Flight<CountRead>>,
  caller: string,
  reads: Map<string, CountRead | null>,
  lastKnownCopy: boolean,
  path?: QueryPath,
): Promise<void> {
  if (mine.size === 0) return;
  const edge = await readEdge(rt, [...mine.keys()]);
  for (const [key, read] of edge) reads.set(key, read);
  const found = new Map<string, Flight<CountRead>>();
  const missing = new Map<string, Flight<CountRead>>();
  for (const [key, flight] of mine) (edge.has(key) ? found : missing).set(key, flight);
  flights.land(found, (key) => edge.get(key));
  if (missing.size === 0) return;
  const group = path ? `${caller} ${path}` : caller;
  // A like's answer (the critical path) reads at once and alone: holding its
  // read open a turn for others would add that turn to its user's wait, and
  // no read of that path is ever held open for it to join.
  const shared = path !== "critical";
  if (shared && flights.join(group, missing)) {
    // The reader that took them in counted their misses: waiting for it here is no flight hit.
    await waitForFlights(missing.values(), flightWaitMs(rt.env, path));
    await settle(missing, reads, lastKnownCopy);
    return;
  }
  const read = (async () => {
    const batch = shared ? await flights.gather(group, missing) : missing;
    try {
      const loaded = await readStore(rt, [...batch.keys()], caller, path);
      flights.land(batch, (key) => loaded.get(key));
    } catch (error) {
      flights.land(batch, () => undefined);
      throw error;
    }
  })();
  // Requests that joined wait on this read's outcome: waitUntil keeps it going if this request's client goes away.
  rt.ctx.waitUntil(read.catch(() => undefined));
  await read;
  await settle(missing, reads, lastKnownCopy);
}

/** Items other requests of this isolate are reading: their outcomes, once all answered or the wait ran out. */
async function waitForOthers(
  env: Env,
  waiting: readonly [string, Flight<CountRead>][],
  reads: Map<string, CountRead | null>,
  lastKnownCopy: boolean,
  path?: QueryPath,
): Promise<void> {
  if (waiting.length === 0) return;
  await waitForFlights(waiting.map(([, flight]) => flight), flightWaitMs(env, path));
  await settle(waiting, reads, lastKnownCopy, true);
}

/**
 * Each flight's answer, or for one whose read failed or took too long, the
 * last known value. `shared`: the reads were other requests', so what they
 * answered is served as a cache hit.
 */
async function settle(
  outcomes: Iterable<readonly [string, Flight<CountRead>]>,
  reads: Map<string, CountRead | null>,
  lastKnownCopy: boolean,
  shared = false,
): Promise<void> {
  const unanswered: string[] = [];
  let hits = 0;
  for (const [key, flight] of outcomes) {
    if (!flight.result) unanswered.push(key);
    else if (!shared) reads.set(key, flight.result);
    else {
      hits++;
      reads.set(key, { ...flight.result, cached: true, firstRead: false });
    }
  }
  if (hits > 0) metrics.count("cache_lookups_total", { cache: "flight", result: "hit" }, hits);
  await Promise.all(unanswered.map(async (key) => reads.set(key, await lastKnownRead(key, lastKnownCopy))));
}

/** The Cache API's fresh values of items, each kept in this isolate's memory. */
async function readEdge(rt: Runtime, keys: string[]): Promise<Map<string, CountRead>> {
  const tiers = ttls(rt.env);
  const reads = new Map<string, CountRead>();
  if (tiers.edgeMs <= 0) return reads;
  const reach = ownWriteReachMs(config(rt.env));
  const edge = await Promise.all(keys.map((key) => edgeGet(key, Date.now())));
  const now = Date.now();
  keys.forEach((key, i) => {
    const hit = edge[i];
    if (!hit) return;
    metrics.count("cache_lookups_total", { cache: "edge", result: "hit" });
    const readAt = hit.readAt ?? now;
    const value = { ...(outranking(key, hit, reach, now) ?? hit), readAt };
    memory.put(key, value, tiers.memoryMs, now);
    reads.set(key, { ...value, cached: true, firstRead: hit.readAt === null, stale: false });
  });
  return reads;
}

/** The regional store's values of items, each kept in both cache tiers; items whose database failed are left out. */
async function readStore(rt: Runtime, missing: string[], caller: string, path?: QueryPath): Promise<Map<string, CountRead>> {
  const tiers = ttls(rt.env);
  const reach = ownWriteReachMs(config(rt.env));
  const reads = new Map<string, CountRead>();
  metrics.count("cache_lookups_total", { cache: "all", result: "miss" }, missing.length);
  const { found, settings, failed } = await readCountRows(rt.env, missing, caller, config(rt.env).READ_STORE_TIMEOUT_MS, path);
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

/** What an item the store did not answer for is served: the last value this isolate knew, else (for a batch) the location's. */
async function lastKnownRead(key: string, lastKnownCopy: boolean): Promise<CountRead | null> {
  return lastKnownStale(key) ?? (lastKnownCopy ? await edgeLastKnownStale(key) : null);
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
