import {
  cacheHitRate,
  dedupRate,
  gaugeMax,
  hotItemCount,
  latency,
  LIKE_ROUTES,
  READ_ROUTES,
} from "./measures";
import type { MetricsRead } from "./protocol";

/**
 * The monitoring thresholds, evaluated over the last five minutes (rates and
 * latencies) or the latest value (gauges). The same rules, in PromQL, are in
 * docs/alerts.rules.yml; keep the two in step.
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
