import {
  cacheHitRate,
  counterSum,
  dedupRate,
  gaugeMax,
  hotItemCount,
  latency,
  LIKE_ROUTES,
  maxRateBy,
  queueBacklog,
  READ_ROUTES,
  serverErrorRate,
} from "./measures";
import type { MetricsRead } from "./protocol";

/**
 * The monitoring thresholds, evaluated over the last five minutes (rates and
 * latencies) or the latest value (gauges and totals). The same rules, in
 * PromQL, are in docs/alerts.rules.yml with their `for` windows and the
 * reasons for each threshold; keep the two in step.
 */
export type AlertRule = {
  name: string;
  summary: string;
  threshold: number;
  fires: "above" | "below";
  measure: (read: MetricsRead) => number | null;
};

export const ALERT_RULES: readonly AlertRule[] = [
  {
    name: "error_rate",
    summary: "Over 0.1 % of requests failed with a server error.",
    threshold: 0.001,
    fires: "above",
    measure: (r) => serverErrorRate(r.alert.series),
  },
  {
    name: "like_latency_p99",
    summary: "Like p99 latency is over 100 ms.",
    threshold: 0.1,
    fires: "above",
    measure: (r) => latency(r.alert.series, LIKE_ROUTES)?.p99 ?? null,
  },
  {
    name: "read_latency_p99",
    summary: "Read p99 latency is over 50 ms.",
    threshold: 0.05,
    fires: "above",
    measure: (r) => latency(r.alert.series, READ_ROUTES)?.p99 ?? null,
  },
  {
    name: "cache_hit_rate",
    summary: "The count cache hit rate is under 90 %.",
    threshold: 0.9,
    fires: "below",
    measure: (r) => cacheHitRate(r.alert.series),
  },
  {
    name: "dedup_rate",
    summary: "Over 20 % of likes are repeats of an existing like.",
    threshold: 0.2,
    fires: "above",
    measure: (r) => dedupRate(r.alert.series),
  },
  {
    name: "consumer_backlog",
    summary: "Over 10,000 queue messages wait for the aggregator.",
    threshold: 10000,
    fires: "above",
    measure: (r) => queueBacklog(r.totals),
  },
  {
    name: "consumer_lag",
    summary: "The aggregator is over 30 s behind the objects.",
    threshold: 30,
    fires: "above",
    measure: (r) => gaugeMax(r.totals, "plaudit_aggregator_lag_seconds"),
  },
  {
    name: "drift",
    summary: "Over 1 % of reconciled items drifted from their objects.",
    threshold: 0.01,
    fires: "above",
    measure: (r) => gaugeMax(r.totals, "plaudit_reconciliation_drift_ratio"),
  },
  {
    name: "hot_items",
    summary: "Over 5,000 items are hot.",
    threshold: 5000,
    fires: "above",
    measure: (r) => hotItemCount(r.totals),
  },
  {
    name: "dead_letters",
    summary: "Queue messages were dead-lettered in the last 10 minutes.",
    threshold: 0,
    fires: "above",
    measure: (r) => counterSum(r.alert.series, "plaudit_queue_messages_total", (l) => l.event === "dead_lettered"),
  },
  {
    name: "queue_headroom",
    summary: "A queue carries over 80 % of its 5,000 messages a second.",
    threshold: 4000,
    fires: "above",
    measure: (r) => maxRateBy(r.alert.series, "plaudit_queue_messages_total", "queue", r.alert.seconds, (l) => l.event === "sent"),
  },
  {
    name: "d1_query_headroom",
    summary: "A D1 database serves over 80 % of its 1,000 queries a second.",
    threshold: 800,
    fires: "above",
    measure: (r) => maxRateBy(r.alert.series, "plaudit_d1_queries_total", "database", r.alert.seconds),
  },
  {
    name: "d1_size_headroom",
    summary: "A D1 database is over 8 GB of its 10 GB.",
    threshold: 8_000_000_000,
    fires: "above",
    measure: (r) => gaugeMax(r.totals, "plaudit_d1_database_bytes"),
  },
  {
    name: "objects_overloaded",
    summary: 'Durable Objects answered "overloaded".',
    threshold: 0,
    fires: "above",
    measure: (r) => counterSum(r.alert.series, "plaudit_object_overloaded_total"),
  },
  {
    name: "breaker_open",
    summary: "A store's circuit breaker has stayed open for 5 minutes.",
    threshold: 0,
    fires: "above",
    measure: (r) => gaugeMax(r.totals, "plaudit_circuit_breaker_open"),
  },
];

export type AlertState = { name: string; summary: string; threshold: number; value: number | null; firing: boolean };

/** Each rule's value and whether it fires; a rule without data does not fire. */
export function evaluateAlerts(read: MetricsRead): AlertState[] {
  return ALERT_RULES.map(({ name, summary, threshold, fires, measure }) => {
    const value = measure(read);
    const firing = value !== null && (fires === "above" ? value > threshold : value < threshold);
    return { name, summary, threshold, value, firing };
  });
}
