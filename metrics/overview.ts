import type { z } from "zod";
import type { DashboardData } from "../shared/schemas";
import type { AlertState } from "./alerts";
import {
  cacheHitRate,
  counterSum,
  dedupRate,
  gaugeMax,
  hotItemCount,
  latency,
  likeOutcomes,
  LIKE_ROUTES,
  maxRateBy,
  READ_ROUTES,
  requestCount,
  serverErrorRate,
  topHotItems,
} from "./measures";
import type { MetricsRead } from "./protocol";

type Quantiles = { p50: number; p99: number } | null;

/** The dashboard's data; its schema (and documentation) is DashboardData in shared/schemas.ts. */
export type Overview = z.infer<typeof DashboardData>;

function inMs(q: Quantiles): Quantiles {
  return q && { p50: q.p50 * 1000, p99: q.p99 * 1000 };
}

/** Each pass over every item that has reported its ranges: done of all, items visited in all and in the window. */
function passes(read: MetricsRead): Overview["passes"] {
  const gauges = new Map<string, { ranges: number; ranges_done: number }>();
  for (const s of read.totals.values()) {
    if (s.kind !== "gauge" || (s.name !== "plaudit_pass_ranges" && s.name !== "plaudit_pass_ranges_done")) continue;
    const pass = s.labels.pass ?? "";
    const entry = gauges.get(pass) ?? { ranges: 0, ranges_done: 0 };
    entry[s.name === "plaudit_pass_ranges" ? "ranges" : "ranges_done"] = s.value;
    gauges.set(pass, entry);
  }
  const ofPass = (pass: string) => (labels: Record<string, string>) => labels.pass === pass;
  return [...gauges]
    .map(([pass, ranges]) => ({
      pass,
      ...ranges,
      items: counterSum(read.totals, "plaudit_pass_items_total", ofPass(pass)),
      items_per_second: counterSum(read.recent.series, "plaudit_pass_items_total", ofPass(pass)) / read.recent.seconds,
    }))
    .sort((a, b) => a.pass.localeCompare(b.pass));
}

export function overview(read: MetricsRead, alerts: AlertState[]): Overview {
  const { seconds, series } = read.recent;
  const perSecond = (n: number) => n / seconds;
  return {
    as_of: new Date().toISOString(),
    window_seconds: seconds,
    likes_per_second: perSecond(likeOutcomes(series, "liked") + likeOutcomes(series, "already_liked")),
    unlikes_per_second: perSecond(likeOutcomes(series, "unliked") + likeOutcomes(series, "not_liked")),
    reads_per_second: perSecond(requestCount(series, READ_ROUTES)),
    error_rate: serverErrorRate(series),
    write_latency_ms: inMs(latency(series, LIKE_ROUTES)),
    read_latency_ms: inMs(latency(series, READ_ROUTES)),
    cache_hit_rate: cacheHitRate(series),
    dedup_rate: dedupRate(series),
    rate_limited_per_second: perSecond(counterSum(series, "plaudit_rate_limited_total")),
    queue_lag_seconds: gaugeMax(read.totals, "plaudit_aggregator_lag_seconds"),
    drift_ratio: gaugeMax(read.totals, "plaudit_reconciliation_drift_ratio"),
    hot_item_count: hotItemCount(read.totals),
    hot_items: topHotItems(read.totals),
    headroom: {
      queue_sends_per_second: maxRateBy(series, "plaudit_queue_messages_total", "queue", seconds, (l) => l.event === "sent"),
      d1_queries_per_second: maxRateBy(series, "plaudit_d1_queries_total", "database", seconds),
      d1_largest_database_bytes: gaugeMax(read.totals, "plaudit_d1_database_bytes"),
      objects_overloaded: counterSum(series, "plaudit_object_overloaded_total"),
    },
    passes: passes(read),
    breakers: [...read.totals.values()]
      .flatMap((s) => (s.kind === "gauge" && s.name === "plaudit_circuit_breaker_open" ? [{ dependency: s.labels.dependency ?? "", open: s.value === 1 }] : []))
      .sort((a, b) => a.dependency.localeCompare(b.dependency)),
    alerts,
  };
}
