import type { MetricsRead, ShardRead, Window } from "./protocol";
import { mergeAll, type Series } from "./series";

/**
 * How many metrics objects share the isolates' flushes. Each isolate always
 * flushes to the same one (a hash of its id), so no object sees every
 * isolate's traffic; a read asks all of them and adds their series up.
 *
 * WARNING: readers enumerate shards 0..METRICS_SHARDS-1 by `shardName`;
 * lowering the count or renaming strands the history of the shards left out.
 */
export const METRICS_SHARDS = 8;

export function shardName(index: number): string {
  return `metrics:${index}`;
}

/** FNV-1a: a stable, cheap spread of isolate ids over the shards. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function shardFor(env: Env, source: string) {
  return env.METRICS_SHARD.get(env.METRICS_SHARD.idFromName(shardName(hash(source) % METRICS_SHARDS)));
}

function window(reads: ShardRead[], pick: (r: ShardRead) => { since: number; series: Series[] }): Window {
  const since = Math.min(...reads.map((r) => pick(r).since));
  const now = Math.max(...reads.map((r) => r.now));
  const series = mergeAll(new Map(), reads.flatMap((r) => pick(r).series));
  return { seconds: Math.max(1, (now - since) / 1000), series };
}

/**
 * Reads and merges all shards. Throws if any shard cannot be read: a partial
 * sum would look to Prometheus like counters going backwards.
 */
export async function readAllShards(env: Env): Promise<MetricsRead> {
  const reads = await Promise.all(
    Array.from({ length: METRICS_SHARDS }, (_, i) =>
      env.METRICS_SHARD.get(env.METRICS_SHARD.idFromName(shardName(i))).read(),
    ),
  );
  return {
    totals: mergeAll(new Map(), reads.flatMap((r) => r.totals)),
    recent: window(reads, (r) => r.recent),
    alert: window(reads, (r) => r.alert),
  };
}
