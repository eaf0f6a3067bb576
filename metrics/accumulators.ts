import { config } from "../shared/config";
import { withDeadline } from "../shared/deadline";
import type { AccumulatorRead, FlushBatch, MetricsRead, Window } from "./protocol";
import { mergeAll, type Series } from "./series";

/**
 * How many metrics accumulators share the isolates' flushes. Each isolate
 * always flushes to the same one (a hash of its id), so no accumulator sees
 * every isolate's traffic; a read asks all of them and adds their series up.
 *
 * WARNING: readers enumerate accumulators 0..METRICS_ACCUMULATORS-1 by
 * `accumulatorName`; lowering the count or renaming strands the history of
 * the accumulators left out.
 */
export const METRICS_ACCUMULATORS = 8;

/** WARNING: the object names of deployed accumulators; changing them loses their totals. */
export function accumulatorName(index: number): string {
  return `metrics:${index}`;
}

export function accumulator(env: Env, index: number) {
  return env.METRICS_ACCUMULATOR.get(env.METRICS_ACCUMULATOR.idFromName(accumulatorName(index)));
}

/** FNV-1a: a stable, cheap spread of isolate ids over the accumulators. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * Sends an isolate's batches to its accumulator under the object-call
 * deadline, as every object call has one: a hung accumulator must not hold
 * the request whose waitUntil flushes, nor a reader of /metrics, which
 * flushes first. Safe to give up on: a batch is applied once, however often
 * it is resent. Not counted in plaudit_object_calls_total, unlike the calls
 * of durable-objects/lib/object-calls.ts: a flush that counted itself would
 * always leave something new to flush, and an idle isolate would never stop.
 */
export async function mergeInto(env: Env, source: string, batches: readonly FlushBatch[]): Promise<void> {
  await withDeadline(accumulator(env, hash(source) % METRICS_ACCUMULATORS).merge(batches), config(env).OBJECT_CALL_TIMEOUT_MS, "metrics_accumulator.merge");
}

function window(reads: AccumulatorRead[], pick: (r: AccumulatorRead) => { since: number; series: Series[] }): Window {
  const since = Math.min(...reads.map((r) => pick(r).since));
  const now = Math.max(...reads.map((r) => r.now));
  const series = mergeAll(new Map(), reads.flatMap((r) => pick(r).series));
  return { seconds: Math.max(1, (now - since) / 1000), series };
}

/**
 * Reads and merges all accumulators, each under the object-call deadline.
 * Throws if any cannot be read in time: a partial sum would look to
 * Prometheus like counters going backwards.
 */
export async function readAllAccumulators(env: Env): Promise<MetricsRead> {
  const deadline = config(env).OBJECT_CALL_TIMEOUT_MS;
  const reads = await Promise.all(
    Array.from({ length: METRICS_ACCUMULATORS }, (_, i) => withDeadline(accumulator(env, i).read(), deadline, "metrics_accumulator.read")),
  );
  return {
    totals: mergeAll(new Map(), reads.flatMap((r) => r.totals)),
    recent: window(reads, (r) => r.recent),
    alert: window(reads, (r) => r.alert),
  };
}
