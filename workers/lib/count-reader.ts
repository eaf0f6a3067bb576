import { zeroCounts, type Counts } from "../../shared/counters";
import { numberVar } from "../../shared/config";
import { withRetries } from "../../shared/retries";
import { CountCache, type CachedCounts } from "./count-cache";
import { edgeGet, edgePut } from "./edge-cache";
import { itemCounter } from "./objects";
import { storedCounts } from "./stored-counts";

/** What a read path needs from the request: bindings, and a way to work after the answer. */
export type Runtime = { env: Env; ctx: Pick<ExecutionContext, "waitUntil"> };

/** `cached`: the value came from a cache tier. `stale`: the object failed and this is the last known value. */
export type CountRead = CachedCounts & { cached: boolean; stale: boolean };

const memory = new CountCache();
const inflight = new Map<string, Promise<CountRead>>();

function ttls(env: Env) {
  return {
    memoryMs: numberVar(env.READ_CACHE_MEMORY_TTL_MS, 1_000),
    edgeMs: numberVar(env.READ_CACHE_EDGE_TTL_MS, 2_000),
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
  if (hit) return { ...hit, cached: true, stale: false };
  let call = inflight.get(key);
  if (!call) {
    call = load(rt, key).finally(() => inflight.delete(key));
    inflight.set(key, call);
  }
  try {
    return await call;
  } catch (error) {
    const known = memory.lastKnown(key) ?? (await storedCounts(rt.env.DB, key));
    if (known) return { ...known, cached: true, stale: true };
    throw error;
  }
}

async function load(rt: Runtime, key: string): Promise<CountRead> {
  const { memoryMs, edgeMs } = ttls(rt.env);
  if (edgeMs > 0) {
    const edge = await edgeGet(key, Date.now());
    if (edge) {
      memory.put(key, edge, memoryMs, Date.now());
      return { ...edge, cached: true, stale: false };
    }
  }
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
