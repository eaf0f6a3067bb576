import { log } from "../shared/log";
import { labelText, type Series } from "./series";

/** Analytics Engine takes a limited number of data points per invocation; metrics stay well under it. */
const MAX_POINTS_PER_FLUSH = 100;

/**
 * When a Workers Analytics Engine dataset is bound as METRICS_ANALYTICS, each
 * flushed change also becomes a data point there (the dataset is write-only
 * from a Worker; production dashboards query it through its SQL API). One
 * point per series: blob1 the metric name, blob2 its labels; double1 the
 * counter's increase, the gauge's value or the histogram's sum of seconds,
 * double2 the histogram's count.
 */
export function writeAnalytics(env: Env, series: readonly Series[]): void {
  const dataset = env.METRICS_ANALYTICS;
  if (!dataset) return;
  for (const s of series.slice(0, MAX_POINTS_PER_FLUSH)) {
    const doubles = s.kind === "histogram" ? [s.sum, s.count] : [s.value, 0];
    try {
      dataset.writeDataPoint({ indexes: [s.name], blobs: [s.name, labelText(s.labels)], doubles });
    } catch (error) {
      log("warn", "analytics_write_failed", { error: String(error) });
      return;
    }
  }
}
