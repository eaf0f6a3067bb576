import { addHistogram, type Histogram } from "./histogram";

export type Labels = Readonly<Record<string, string>>;

/**
 * One time series: a metric name (with its `plaudit_` prefix) and a label set.
 * Counters and histograms add up when merged; a gauge is a last value, and the
 * newest one (by the time it was set) wins.
 */
export type Series =
  | { kind: "counter"; name: string; labels: Labels; value: number }
  | ({ kind: "histogram"; name: string; labels: Labels } & Histogram)
  | { kind: "gauge"; name: string; labels: Labels; value: number; at: number; expiresAt: number | null };

export type SeriesMap = Map<string, Series>;

/** Prometheus' label value escaping: backslash, double quote and newline. */
export function escapeLabelValue(value: string): string {
  if (!/[\\"\n]/.test(value)) return value;
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

/** `label="value",...` sorted by label name: one spelling per label set. Made for every series a batch meets and every series an accumulator merges, so a plain loop. */
export function labelText(labels: Labels): string {
  const names = Object.keys(labels);
  if (names.length > 1) names.sort();
  let text = "";
  for (const name of names) text += `${text === "" ? "" : ","}${name}="${escapeLabelValue(labels[name]!)}"`;
  return text;
}

export function seriesKey(name: string, labels: Labels): string {
  return `${name}{${labelText(labels)}}`;
}

export function copySeries(s: Series): Series {
  return s.kind === "histogram" ? { ...s, buckets: [...s.buckets] } : { ...s };
}

/** Adds `delta` into `target`, exactly: counts are integers and only ever added. */
export function mergeSeries(target: SeriesMap, delta: Series): void {
  const key = seriesKey(delta.name, delta.labels);
  const current = target.get(key);
  // A metric whose kind changed between two deploys starts over rather than mixing kinds.
  if (!current || current.kind !== delta.kind) {
    target.set(key, copySeries(delta));
    return;
  }
  if (current.kind === "counter" && delta.kind === "counter") current.value += delta.value;
  else if (current.kind === "histogram" && delta.kind === "histogram") addHistogram(current, delta);
  else if (current.kind === "gauge" && delta.kind === "gauge" && delta.at >= current.at) target.set(key, { ...delta });
}

export function mergeAll(target: SeriesMap, series: Iterable<Series>): SeriesMap {
  for (const s of series) mergeSeries(target, s);
  return target;
}
