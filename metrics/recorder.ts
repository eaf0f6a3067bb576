import { log } from "../shared/log";
import { bucketIndex, emptyHistogram } from "./histogram";
import { seriesKey, type Labels, type Series, type SeriesMap } from "./series";

export const METRIC_PREFIX = "plaudit_";
const NAME = /^[a-z_][a-z0-9_]*$/;

type Kind = Series["kind"];

/** One step of a label set's lookup path (`Recorder.#series`). */
type Path = { next: Map<string, Path>; series: Series | null; batch: number };

/** Steps kept for lookups; far above what plaudit's bounded label sets make. */
const MAX_PATH_NODES = 10_000;

/**
 * This isolate's metrics since its last flush. Recording is a map update in
 * memory and nothing else: no I/O, no await, never a throw into the caller's
 * path. `take()` hands the accumulated changes to the flusher and starts over.
 */
export class Recorder {
  #pending: SeriesMap = new Map();
  #kinds = new Map<string, Kind>();
  #rejected = new Set<string>();
  #paths = new Map<string, Path>();
  #pathNodes = 0;
  /** Which batch `#pending` is; a path's series counts only in the batch it was found in. */
  #batch = 0;

  /** Adds `by` (default 1) to a counter. Name it `..._total`. */
  count(name: string, labels: Labels = {}, by = 1): void {
    const series = this.#series(name, labels, "counter");
    if (series?.kind === "counter" && Number.isFinite(by) && by >= 0) series.value += by;
  }

  /** Records one duration, in seconds, into a latency histogram. Name it `..._seconds`. */
  observe(name: string, labels: Labels, seconds: number): void {
    const series = this.#series(name, labels, "histogram");
    if (series?.kind !== "histogram" || !Number.isFinite(seconds) || seconds < 0) return;
    series.buckets[bucketIndex(seconds)]!++;
    series.sum += seconds;
    series.count++;
  }

  /**
   * Sets a gauge. Across isolates the most recently set value wins. With
   * `ttlSeconds`, the value disappears when not set again within that time
   * (for per-item gauges such as hot items, which should vanish as items cool).
   */
  gauge(name: string, labels: Labels, value: number, options: { ttlSeconds?: number } = {}): void {
    const full = METRIC_PREFIX + name;
    if (!Number.isFinite(value) || !this.#accepts(full, labels, "gauge")) return;
    const at = Date.now();
    const expiresAt = options.ttlSeconds === undefined ? null : at + options.ttlSeconds * 1000;
    this.#pending.set(seriesKey(full, labels), { kind: "gauge", name: full, labels: { ...labels }, value, at, expiresAt });
  }

  get idle(): boolean {
    return this.#pending.size === 0;
  }

  take(): Series[] {
    const taken = [...this.#pending.values()];
    this.#pending = new Map();
    this.#batch++;
    return taken;
  }

  /**
   * The batch's series for a label set, found on the common path without
   * building its key: one map level per label name and per value, in the
   * caller's order, and the series it led to in this batch. Building the key
   * (escaping, sorting, hashing a new string) on every count was about half
   * of what metrics cost a like (docs/benchmarks.md).
   */
  #series(name: string, labels: Labels, kind: "counter" | "histogram"): Series | undefined {
    let node = this.#step(this.#paths, name);
    for (const label in labels) node = this.#step(this.#step(node.next, label).next, labels[label]!);
    if (node.batch === this.#batch && node.series) return node.series.kind === kind ? node.series : undefined;
    const series = this.#seriesByKey(name, labels, kind);
    if (series) {
      node.series = series;
      node.batch = this.#batch;
    }
    return series;
  }

  #step(level: Map<string, Path>, key: string): Path {
    const known = level.get(key);
    if (known) return known;
    // Label values are bounded by design; should a caller break that, the lookups start over rather than grow.
    if (++this.#pathNodes > MAX_PATH_NODES) {
      this.#paths.clear();
      this.#pathNodes = 1;
    }
    const node: Path = { next: new Map(), series: null, batch: -1 };
    level.set(key, node);
    return node;
  }

  #seriesByKey(name: string, labels: Labels, kind: "counter" | "histogram"): Series | undefined {
    const full = METRIC_PREFIX + name;
    const key = seriesKey(full, labels);
    const existing = this.#pending.get(key);
    if (existing) return existing.kind === kind ? existing : undefined;
    if (!this.#accepts(full, labels, kind)) return undefined;
    const series: Series =
      kind === "counter"
        ? { kind, name: full, labels: { ...labels }, value: 0 }
        : { kind, name: full, labels: { ...labels }, ...emptyHistogram() };
    this.#pending.set(key, series);
    return series;
  }

  /** A valid name and label set, and the name not already used with another kind; else one warning per name. */
  #accepts(full: string, labels: Labels, kind: Kind): boolean {
    const known = this.#kinds.get(full);
    const ok = (known ?? kind) === kind && NAME.test(full) && Object.keys(labels).every((l) => NAME.test(l) && l !== "le");
    if (ok) {
      this.#kinds.set(full, kind);
      return true;
    }
    if (!this.#rejected.has(full)) {
      this.#rejected.add(full);
      log("warn", "metric_rejected", { name: full, kind, labels: Object.keys(labels) });
    }
    return false;
  }
}

/** The isolate's recorder: `metrics.count(...)`, `metrics.observe(...)`, `metrics.gauge(...)`. */
export const metrics = new Recorder();
