import { addHistogram, emptyHistogram, quantile, type Histogram } from "./histogram";
import type { Labels, SeriesMap } from "./series";

/** Routes whose latency is "write" (like) and "read" latency on the dashboard and in the alerts. */
export const LIKE_ROUTES: readonly string[] = ["/v1/like"];
export const READ_ROUTES: readonly string[] = ["/v1/count", "/v1/counts"];

type Where = (labels: Labels) => boolean;
const everything: Where = () => true;

export function counterSum(series: SeriesMap, name: string, where: Where = everything): number {
  let sum = 0;
  for (const s of series.values()) if (s.kind === "counter" && s.name === name && where(s.labels)) sum += s.value;
  return sum;
}

export function histogramSum(series: SeriesMap, name: string, where: Where = everything): Histogram {
  const sum = emptyHistogram();
  for (const s of series.values()) if (s.kind === "histogram" && s.name === name && where(s.labels)) addHistogram(sum, s);
  return sum;
}

/** The largest value of a gauge over its label sets (the worst queue, say); null when never set. */
export function gaugeMax(series: SeriesMap, name: string): number | null {
  let max: number | null = null;
  for (const s of series.values()) if (s.kind === "gauge" && s.name === name) max = Math.max(max ?? s.value, s.value);
  return max;
}

const onRoutes =
  (routes: readonly string[]): Where =>
  (labels) =>
    routes.includes(labels.route ?? "");

/** p50 and p99 in seconds of the routes' requests; null without requests. */
export function latency(series: SeriesMap, routes: readonly string[]): { p50: number; p99: number } | null {
  const h = histogramSum(series, "plaudit_request_duration_seconds", onRoutes(routes));
  const p50 = quantile(h, 0.5);
  const p99 = quantile(h, 0.99);
  return p50 === null || p99 === null ? null : { p50, p99 };
}

export function requestCount(series: SeriesMap, routes: readonly string[]): number {
  return counterSum(series, "plaudit_requests_total", onRoutes(routes));
}

export function serverErrorRate(series: SeriesMap): number | null {
  const all = counterSum(series, "plaudit_requests_total");
  if (all === 0) return null;
  return counterSum(series, "plaudit_requests_total", (l) => Number(l.status) >= 500) / all;
}

/**
 * The largest per-second rate of a counter over the groups of one label (the
 * busiest queue, the busiest database) in a window; null without any data.
 */
export function maxRateBy(series: SeriesMap, name: string, label: string, seconds: number, where: Where = everything): number | null {
  const sums = new Map<string, number>();
  for (const s of series.values()) {
    if (s.kind !== "counter" || s.name !== name || !where(s.labels)) continue;
    const group = s.labels[label] ?? "";
    sums.set(group, (sums.get(group) ?? 0) + s.value);
  }
  if (sums.size === 0 || seconds <= 0) return null;
  return Math.max(...sums.values()) / seconds;
}

/** Queue messages sent and not yet consumed or dead-lettered: the consumers' backlog. */
export function queueBacklog(totals: SeriesMap): number | null {
  const sent = counterSum(totals, "plaudit_queue_messages_total", (l) => l.event === "sent");
  if (sent === 0) return null;
  const done = counterSum(totals, "plaudit_queue_messages_total", (l) => l.event === "consumed" || l.event === "dead_lettered");
  return Math.max(0, sent - done);
}

export function likeOutcomes(series: SeriesMap, outcome: string): number {
  return counterSum(series, "plaudit_toggle_outcomes_total", (l) => l.counter === "likes" && l.outcome === outcome);
}

/** Share of likes that were repeats (`already_liked`): the retries and double taps dedup absorbed. */
export function dedupRate(series: SeriesMap): number | null {
  const repeats = likeOutcomes(series, "already_liked");
  const all = repeats + likeOutcomes(series, "liked");
  return all === 0 ? null : repeats / all;
}

export function cacheHitRate(series: SeriesMap): number | null {
  const hits = counterSum(series, "plaudit_cache_lookups_total", (l) => l.result === "hit");
  const all = hits + counterSum(series, "plaudit_cache_lookups_total", (l) => l.result === "miss");
  return all === 0 ? null : hits / all;
}

/** Items hot right now: every split not yet followed by its merge. */
export function hotItemCount(totals: SeriesMap): number {
  return Math.max(0, counterSum(totals, "plaudit_shard_splits_total") - counterSum(totals, "plaudit_shard_merges_total"));
}

export type HotItem = { item: string; shards: number; writes_per_second: number | null };

/** The hottest items reported through their per-item gauges, by write rate, then by shard count. */
export function topHotItems(totals: SeriesMap, limit = 10): HotItem[] {
  const items = new Map<string, HotItem>();
  for (const s of totals.values()) {
    if (s.kind !== "gauge" || !s.labels.item) continue;
    const entry = items.get(s.labels.item) ?? { item: s.labels.item, shards: 0, writes_per_second: null };
    if (s.name === "plaudit_hot_item_shards") entry.shards = s.value;
    else if (s.name === "plaudit_hot_item_writes_per_second") entry.writes_per_second = s.value;
    else continue;
    items.set(s.labels.item, entry);
  }
  return [...items.values()]
    .sort((a, b) => (b.writes_per_second ?? 0) - (a.writes_per_second ?? 0) || b.shards - a.shards)
    .slice(0, limit);
}
