// The read path's store load, from the layout (K databases) and from the
// cache hit rate a Zipf popularity and the cache lifetimes give. Pure.

/**
 * A feed's store round trips stay at most this many at any K
 * (workers/stores/item-counts.ts, MAX_ROUND_TRIPS; the capacity test reads it there).
 */
export const MAX_STORE_ROUND_TRIPS = 2;

export type ReadLoad = {
  /** Items read can be any of these many, by Zipf popularity with this exponent. */
  items: number;
  zipf: number;
  feedsPerSecond: number;
  feedItems: number;
  /** Isolates sharing the load (memory tier) and locations (Cache API tier), each an equal share. */
  isolates: number;
  locations: number;
  memoryTtlS: number;
  edgeTtlS: number;
  countDatabases: number;
};

export type ReadPath = {
  /** Request-weighted share of item reads that reach the store (both cache tiers missed). */
  itemMissRate: number;
  /** Share of feeds with at least one item the caches missed: each makes one store read. */
  feedMissRate: number;
  storeReadsPerFeed: number;
  /** Missed items per store read. */
  missesPerStoreRead: number;
  /** Per feed served: D1 queries, central-store batch reads and the keys they carry, items read from D1. */
  d1QueriesPerFeed: number;
  centralRequestsPerFeed: number;
  centralKeysPerFeed: number;
  d1ItemsPerFeed: number;
  /** Store requests per store read (each at most MAX_STORE_ROUND_TRIPS). */
  roundTripsPerStoreRead: number;
  /** Share of store reads that go to the central store (their misses span more than two databases). */
  centralShare: number;
  /**
   * D1 queries per feed while the central store is off or down: one per
   * database the misses fall in, whatever their number (the degraded mode,
   * and `npm start` in the bench, which runs without the central store).
   */
  d1QueriesPerFeedWithoutCentral: number;
};

/**
 * Σ f(i) for i = 1..n: the first terms exactly, the rest as the integral of
 * f over geometric buckets (Simpson's rule in each), which holds for the
 * smooth, decreasing terms of a Zipf sum to well under 0.1 %.
 */
export function sumTo(n: number, f: (i: number) => number): number {
  const exact = Math.min(n, 2_000);
  let sum = 0;
  for (let i = 1; i <= exact; i++) sum += f(i);
  let a = exact + 0.5;
  const end = n + 0.5;
  while (a < end) {
    const b = Math.min(end, a * 1.01);
    sum += ((b - a) / 6) * (f(a) + 4 * f((a + b) / 2) + f(b));
    a = b;
  }
  return sum;
}

/**
 * A pure function of numbers that remembers its answers: a page asks for the
 * same few shapes (items, exponent, feed size) at many loads, and each answer
 * takes tens of sums over up to 10^10 items. It keeps the latest `limit`
 * answers, so a caller sweeping many shapes does not grow it without end.
 */
export function remembered<A extends number[], R>(f: (...args: A) => R, limit = 256): (...args: A) => R {
  const known = new Map<string, R>();
  return (...args: A) => {
    const key = args.join(":");
    const hit = known.get(key);
    if (hit !== undefined) return hit;
    const answer = f(...args);
    // Maps keep insertion order: the first key is the oldest answer.
    if (known.size >= limit) known.delete(known.keys().next().value!);
    known.set(key, answer);
    return answer;
  };
}

/** The Zipf exponent s under which the top `topShare` of `n` items take `share` of the accesses. */
export const zipfExponentFor = remembered((n: number, topShare: number, share: number): number => {
  const top = Math.max(1, Math.round(n * topShare));
  const shareAt = (s: number) => sumTo(top, (i) => i ** -s) / sumTo(n, (i) => i ** -s);
  let lo = 0;
  let hi = 2;
  for (let step = 0; step < 50; step++) {
    const mid = (lo + hi) / 2;
    if (shareAt(mid) < share) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
});

/**
 * A lifetime cache (filled on a miss, trusted for T): with reads arriving at
 * rate r, each fill is followed on average by rT hits, so the hit rate is
 * rT / (1 + rT).
 */
export const ttlHitRate = (rate: number, ttlS: number) => (rate * ttlS) / (1 + rate * ttlS);

/**
 * Of n missed items spread over K databases by hash: the chance they fall in
 * one database, and in exactly two (occupancy of K cells by n balls).
 */
export function databasesSpanned(n: number, k: number): { one: number; two: number } {
  if (k === 1) return { one: 1, two: 0 };
  const one = k ** (1 - n);
  const two = k === 2 ? 1 - one : ((k * (k - 1)) / 2) * ((2 ** n - 2) / k ** n);
  return { one, two };
}

/** Of n missed items spread over K databases by hash, how many databases they fall in on average: K(1 - (1 - 1/K)^n). */
export function meanDatabasesSpanned(n: number, k: number): number {
  return k * (1 - (1 - 1 / k) ** n);
}

function binomial(n: number, p: number): number[] {
  const out: number[] = [];
  let logC = 0;
  for (let j = 0; j <= n; j++) {
    if (j > 0) logC += Math.log((n - j + 1) / j);
    out.push(p <= 0 ? (j === 0 ? 1 : 0) : p >= 1 ? (j === n ? 1 : 0) : Math.exp(logC + j * Math.log(p) + (n - j) * Math.log(1 - p)));
  }
  return out;
}

/**
 * The Zipf sum's norm and the c for which Σ π_i = F (π_i = 1 - exp(-c p_i)),
 * found by bisection: they depend on the items, the exponent and the feed's
 * size only, not on the load or the caches.
 */
const feedShape = remembered((items: number, zipf: number, f: number): { norm: number; c: number } => {
  const norm = sumTo(items, (i) => i ** -zipf);
  let lo = f;
  let hi = f * 1e6;
  for (let step = 0; step < 80; step++) {
    const mid = Math.sqrt(lo * hi);
    if (sumTo(items, (i) => 1 - Math.exp(-mid * (i ** -zipf / norm))) < f) lo = mid;
    else hi = mid;
  }
  return { norm, c: Math.sqrt(lo * hi) };
});

/**
 * The read path for a load:
 *  - item i is in a feed with probability π_i = 1 - exp(-c p_i) (Zipf p_i, c
 *    such that Σ π_i = the feed's items: distinct items per feed), read at
 *    λ_i = feeds/s × π_i;
 *  - the isolate's memory misses it with 1 - h(λ_i / isolates, T_memory), the
 *    location's Cache API then with 1 - h(λ_i × memory misses / locations, T_edge);
 *  - a feed makes a store read when any of its F items missed: 1 - (1 - M)^F,
 *    M the request-weighted miss rate;
 *  - its n misses (binomial) go to D1 when they fall in at most two of the
 *    K databases (one query each), else to one central-store batch read;
 *    without the central store, to every database they fall in.
 */
export function readPath(load: ReadLoad): ReadPath {
  const { items, zipf, feedItems: f } = load;
  const { norm, c } = feedShape(items, zipf, f);
  const p = (i: number) => i ** -zipf / norm;
  const missed = sumTo(items, (i) => {
    const inFeed = 1 - Math.exp(-c * p(i));
    const rate = load.feedsPerSecond * inFeed;
    const memoryMiss = 1 - ttlHitRate(rate / load.isolates, load.memoryTtlS);
    const edgeMiss = 1 - ttlHitRate((rate * memoryMiss) / load.locations, load.edgeTtlS);
    return inFeed * memoryMiss * edgeMiss;
  });
  const itemMissRate = Math.min(1, missed / f);
  const counts = binomial(f, itemMissRate);
  let d1Queries = 0;
  let central = 0;
  let centralKeys = 0;
  let d1Items = 0;
  let misses = 0;
  let d1WithoutCentral = 0;
  for (let n = 1; n <= f; n++) {
    const chance = counts[n]!;
    d1WithoutCentral += chance * meanDatabasesSpanned(n, load.countDatabases);
    const { one, two } = databasesSpanned(n, load.countDatabases);
    d1Queries += chance * (one + 2 * two);
    d1Items += chance * (one + two) * n;
    central += chance * (1 - one - two);
    centralKeys += chance * (1 - one - two) * n;
    misses += chance * n;
  }
  const feedMissRate = 1 - counts[0]!;
  const perRead = (x: number) => (feedMissRate > 0 ? x / feedMissRate : 0);
  return {
    itemMissRate,
    feedMissRate,
    storeReadsPerFeed: feedMissRate,
    missesPerStoreRead: perRead(misses),
    d1QueriesPerFeed: d1Queries,
    centralRequestsPerFeed: central,
    centralKeysPerFeed: centralKeys,
    d1ItemsPerFeed: d1Items,
    roundTripsPerStoreRead: perRead(d1Queries + central),
    centralShare: perRead(central),
    d1QueriesPerFeedWithoutCentral: d1WithoutCentral,
  };
}
