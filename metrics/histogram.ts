/**
 * Upper bounds, in seconds, of the latency histogram's buckets: 1 ms to 5 s,
 * about 25 % apart, so p50 and p99 interpolate to within a bucket's width.
 * 50 ms and 100 ms are bounds because the read and like alerts use them.
 *
 * WARNING: never change this list. Stored histograms are bucket counts by
 * position; merging counts recorded with another list silently corrupts them.
 * A new layout needs a new metric name.
 */
export const BUCKET_BOUNDS: readonly number[] = [
  0.001, 0.0015, 0.002, 0.0025, 0.003, 0.004, 0.005, 0.006, 0.008, 0.01, 0.0125, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05,
  0.06, 0.08, 0.1, 0.125, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1, 1.5, 2, 3, 5,
];

/** Counts per bucket (not cumulative); the last slot is the +Inf bucket. */
export type Histogram = { buckets: number[]; sum: number; count: number };

export function emptyHistogram(): Histogram {
  return { buckets: new Array<number>(BUCKET_BOUNDS.length + 1).fill(0), sum: 0, count: 0 };
}

export function bucketIndex(seconds: number): number {
  let low = 0;
  let high = BUCKET_BOUNDS.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (seconds <= BUCKET_BOUNDS[mid]!) high = mid;
    else low = mid + 1;
  }
  return low;
}

export function addHistogram(target: Histogram, delta: Histogram): void {
  for (let i = 0; i < target.buckets.length; i++) target.buckets[i]! += delta.buckets[i] ?? 0;
  target.sum += delta.sum;
  target.count += delta.count;
}

/**
 * The q-quantile in seconds, interpolated linearly inside its bucket as
 * Prometheus' histogram_quantile does; the top finite bound when it falls in
 * the +Inf bucket; null without observations.
 */
export function quantile(h: Histogram, q: number): number | null {
  if (h.count === 0) return null;
  const rank = q * h.count;
  let below = 0;
  for (let i = 0; i < BUCKET_BOUNDS.length; i++) {
    const inBucket = h.buckets[i]!;
    if (below + inBucket >= rank && inBucket > 0) {
      const lower = i === 0 ? 0 : BUCKET_BOUNDS[i - 1]!;
      return lower + (BUCKET_BOUNDS[i]! - lower) * ((rank - below) / inBucket);
    }
    below += inBucket;
  }
  return BUCKET_BOUNDS[BUCKET_BOUNDS.length - 1]!;
}
