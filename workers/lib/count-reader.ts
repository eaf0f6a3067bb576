import { zeroCounts, type Counts } from "../../shared/counters";
import { config } from "../../shared/config";
import { withRetries } from "../../shared/retries";
import { metrics } from "../../metrics/recorder";
import { CountCache, type CachedCounts } from "./count-cache";
import { edgeGet, edgePut } from "./edge-cache";
import { itemCounter } from "./objects";
import { storedCounts } from "./stored-counts";

/** What a read path needs from the request: bindings, and a way to work after the answer. */
export type Runtime = { env: Env; ctx: Pick<ExecutionContext, "waitUntil"> };

/** `cached`: the value came from a cache tier. `stale`: the object failed and this is the last known value. */
export type CountRead = CachedCounts & { cached: boolean; stale: boolean };

const memory = new CountCache();

/** An object call in flight for an item; other requests wait for its outcome, not its promise. */
type Flight = { done: boolean; result?: CountRead };
const inflight = new Map<string, Flight>();
/** How often a request waiting on another's call looks at its outcome, and for how long at most. */
const FLIGHT_POLL_MS = 2;
const FLIGHT_WAIT_MS = 1_000;

function ttls(env: Env) {
  return {
    memoryMs: config(env).READ_CACHE_MEMORY_TTL_MS,
    edgeMs: config(env).READ_CACHE_EDGE_TTL_MS,
  };
}

/**
 * An item's counts: this isolate's memory, then the location's Cache API,
 * then the item's object. Concurrent misses for one item in one isolate share
 * one object call (single flight). When the object fails, the last known value
 * is served as stale (memory, else D1); only when nothing is known does this throw.
 */
export async function readCounts(rt: Runtime, key: string): Promise<CountRead> {
  const hit = memory.fresh(key, Date.now());
  if (hit) {
    metrics.count("cache_lookups_total", { cache: "memory", result: "hit" });
    return { ...hit, cached: true, stale: false };
  }
  const other = inflight.get(key);
  if (other) {
    const shared = await waitForFlight(other);
    if (shared) {
      metrics.count("cache_lookups_total", { cache: "flight", result: "hit" });
      return { ...shared, cached: true };
    }
  }
  const flight: Flight = { done: false };
  inflight.set(key, flight);
  try {
    flight.result = await load(rt, key);
    return flight.result;
  } catch (error) {
    const known = memory.lastKnown(key) ?? (await storedCounts(rt.env.DB, key));
    if (known) return { ...known, cached: true, stale: true };
    throw error;
  } finally {
    flight.done = true;
    if (inflight.get(key) === flight) inflight.delete(key);
  }
}

/**
 * Waits for another request's call to the same item by polling its outcome
 * with this request's own timers. workerd cancels a request whose only
 * pending work is a promise created by another request ("the Worker's code
 * had hung"), so requests share results, never promises. Returns undefined
 * when that call failed or took too long.
 */
async function waitForFlight(flight: Flight): Promise<CountRead | undefined> {
  const deadline = Date.now() + FLIGHT_WAIT_MS;
  while (!flight.done && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, FLIGHT_POLL_MS));
  }
  return flight.result;
}

async function load(rt: Runtime, key: string): Promise<CountRead> {
  const { memoryMs, edgeMs } = ttls(rt.env);
  if (edgeMs > 0) {
    const edge = await edgeGet(key, Date.now());
    if (edge) {
      metrics.count("cache_lookups_total", { cache: "edge", result: "hit" });
      memory.put(key, edge, memoryMs, Date.now());
      return { ...edge, cached: true, stale: false };
    }
  }
  metrics.count("cache_lookups_total", { cache: "all", result: "miss" });
  const snapshot = await withRetries(async () => await itemCounter(rt.env, key).read());
  remember(rt, key, snapshot);
  return { ...snapshot, cached: false, stale: false };
}

function remember(rt: Runtime, key: string, value: CachedCounts): void {
  const { memoryMs, edgeMs } = ttls(rt.env);
  const now = Date.now();
  memory.put(key, value, memoryMs, now);
  const writing = edgeMs > 0 ? edgePut(key, value, edgeMs, now) : undefined;
  if (writing) rt.ctx.waitUntil(writing);
}

/** A user's own write overwrites both cache tiers, so they see it at once. */
export function rememberCounts(rt: Runtime, key: string, counts: Counts, asOf = Date.now()): void {
  remember(rt, key, { counts, asOf });
}

/** The last counts this isolate saw for the item, fresh or not. */
export function lastKnownCounts(key: string): CachedCounts | undefined {
  return memory.lastKnown(key);
}

/** Adds this isolate's own event to what it serves, before the event reaches the item. */
export function bumpCounts(rt: Runtime, key: string, counter: keyof Counts, by: number): Counts {
  const known = memory.lastKnown(key);
  const counts = { ...(known?.counts ?? zeroCounts()) };
  counts[counter] += by;
  remember(rt, key, { counts, asOf: known?.asOf ?? Date.now() });
  return counts;
}
