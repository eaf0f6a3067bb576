import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigSchema } from "../../shared/config";
import { pathEstimate, type LatencyInputs } from "../../capacity/latency";
import { cacheLifetimesS, likeAwakeSeconds, evaluate, evaluateTier, limitsCrossed, needs, rates, shapeReadPath, tierShape, type Measured, type Prices, type Workload } from "../../capacity/model";
import { measuredFromReports } from "../../capacity/measured";
import { defaultSettings, paceBounds, passes, perUnit, priceOf, spare, type PassInputs } from "../../capacity/passes";
import { databasesSpanned, MAX_STORE_ROUND_TRIPS, readPath, remembered, sumTo, ttlHitRate, zipfExponentFor } from "../../capacity/reads";
import { renderCapacity } from "../../capacity/render";
import { EMIT_INTERVAL_MS } from "../../shared/object-windows";
import { USER_DELIVERY_DELAY_MS } from "../../shared/own-writes";
import { benchCheck } from "../../capacity/render-sections";

const root = resolve(import.meta.dirname, "../..");
const read = <T>(path: string): T => JSON.parse(readFileSync(resolve(root, path), "utf8")) as T;
const prices = read<Prices>("capacity/prices.json");
const workload = read<Workload>("capacity/workload.json");
const measured = read<Measured>("capacity/measured.json");
const latency = read<LatencyInputs>("capacity/latency.json");
const passInputs = read<PassInputs>("capacity/passes.json");

describe("the capacity model", () => {
  it("takes its measured costs from the committed bench reports, not from a hand-typed file", () => {
    expect(measuredFromReports(read("capacity/bench-write.json"), read("capacity/bench-feed.json"), read("capacity/bench-feed-k4.json"), measured.source)).toEqual(measured);
  });

  it("is what docs/capacity.md says: the committed page matches the committed inputs (run npm run capacity)", () => {
    expect(readFileSync(resolve(root, "docs/capacity.md"), "utf8")).toBe(renderCapacity(workload, measured, prices, latency, passInputs));
  });

  it("says how many feeds its checks' bench runs kept in flight as their reports say, not as a fixed sentence", () => {
    // The committed reports ran one feed at a time (the committed page says so: the test above); here the first ran 16.
    const page = renderCapacity(workload, { ...measured, feedBench: { ...measured.feedBench, connections: 16 } }, prices, latency, passInputs);
    expect(page).toContain("the check below at K = 1 ran 16 feeds at a time, where feeds may share a read and the model counts more, the one at K = 4 one feed at a time");
    expect(page).not.toContain("ran one feed at a time, where nothing is shared.");
    expect(readFileSync(resolve(root, "docs/capacity.md"), "utf8")).toContain("the checks below (K = 1 and K = 4) ran one feed at a time, where nothing is shared.");
  });

  it("costs twice as much in usage-billed lines at twice the load", () => {
    const base = workload.shapes[0]!;
    const one = evaluate(base, workload, measured, prices);
    const two = evaluate({ ...base, likesPerSecond: base.likesPerSecond * 2, unlikesPerSecond: base.unlikesPerSecond * 2, countReadsPerSecond: base.countReadsPerSecond * 2 }, workload, measured, prices);
    const line = (r: typeof one, name: string) => r.costs.find((c) => c.component === name)!.monthlyUsd;
    for (const name of ["Workers requests", "Durable Objects rows written", "Queues", "D1 rows written"]) {
      expect(line(two, name)).toBeCloseTo(2 * line(one, name), 6);
    }
    expect(line(two, "Durable Objects storage")).toBe(line(one, "Durable Objects storage"));
  });

  it("prices rows written at the list price: one more row per like adds the like rate times a month at $1 per million", () => {
    const base = workload.shapes[0]!;
    const more = { ...measured, perWrite: { ...measured.perWrite, rowsWritten: measured.perWrite.rowsWritten + 1 } };
    const delta =
      evaluate(base, workload, more, prices).costs.find((c) => c.component === "Durable Objects rows written")!.monthlyUsd -
      evaluate(base, workload, measured, prices).costs.find((c) => c.component === "Durable Objects rows written")!.monthlyUsd;
    expect(delta).toBeCloseTo(((base.likesPerSecond + base.unlikesPerSecond) * 30 * 24 * 3600) / 1e6, 3);
  });

  it("prices the timers a like leaves as duration: the user's windows always, the item's off the hot items", () => {
    const commitWindow = ConfigSchema.parse({}).ITEM_COMMIT_WINDOW_MS;
    const user = (USER_DELIVERY_DELAY_MS + commitWindow) / 1000;
    const item = (commitWindow + EMIT_INTERVAL_MS) / 1000;
    expect(likeAwakeSeconds(workload)).toBeCloseTo(user + (1 - workload.assumptions.hotShareOfLikes.value) * item, 9);
    const allHot = { ...workload, assumptions: { ...workload.assumptions, hotShareOfLikes: { ...workload.assumptions.hotShareOfLikes, value: 1 } } };
    expect(likeAwakeSeconds(allHot)).toBeCloseTo(user, 9);
    // Off the handlers, the duration line is the like rate times those seconds at the object's memory and the list price.
    const base = workload.shapes[0]!;
    const noHandlers = { ...workload, assumptions: { ...workload.assumptions, objectHandlerMs: { ...workload.assumptions.objectHandlerMs, value: 0 } } };
    const duration = evaluate(base, noHandlers, measured, prices).costs.find((c) => c.component === "Durable Objects duration")!.monthlyUsd;
    const gbSeconds = (base.likesPerSecond + base.unlikesPerSecond) * likeAwakeSeconds(workload) * prices.durableObjects.memoryGb.value * 30 * 24 * 3600;
    expect(duration).toBeCloseTo((gbSeconds / 1e6) * prices.durableObjects.gbSecondsPerMillion.usd, 3);
    expect(duration).toBeGreaterThan(0);
  });

  it("sizes queues to stay under 80 % of 5,000 messages a second each", () => {
    const peak = evaluate(workload.shapes[1]!, workload, measured, prices);
    expect(peak.rates.queueMessages / peak.needs.queues).toBeLessThanOrEqual(4000);
    expect(peak.rates.queueMessages / Math.max(1, peak.needs.queues - 1)).toBeGreaterThan(4000);
  });

  it("names as first limit the one the load goes furthest past", () => {
    const peak = evaluate(workload.shapes[1]!, workload, measured, prices);
    const limits = limitsCrossed(peak, workload, prices);
    expect(limits.map((l) => l.ratio)).toEqual([...limits.map((l) => l.ratio)].sort((a, b) => b - a));
    expect(limits[0]!.ratio).toBeGreaterThan(1);
  });
});

describe("queries per feed, from the layout and the caches", () => {
  it("reads the caches' lifetimes and the round-trip bound from the code", () => {
    const defaults = ConfigSchema.parse({});
    expect(cacheLifetimesS()).toEqual({ memory: defaults.READ_CACHE_MEMORY_TTL_MS / 1000, edge: defaults.READ_CACHE_EDGE_TTL_MS / 1000 });
    const source = readFileSync(resolve(root, "workers/stores/item-counts.ts"), "utf8");
    expect(source).toContain(`export const MAX_ROUND_TRIPS = ${MAX_STORE_ROUND_TRIPS};`);
  });

  it("sums a Zipf series as the exact sum does, and finds the exponent that gives the customer's top share", () => {
    expect(sumTo(100_000, (i) => 1 / i)).toBeCloseTo(Math.log(100_000) + 0.5772156649 + 1 / 200_000, 4);
    const n = 1e6;
    const s = zipfExponentFor(n, 0.001, 0.5);
    let top = 0;
    let all = 0;
    for (let i = 1; i <= n; i++) {
      all += i ** -s;
      if (i <= n * 0.001) top += i ** -s;
    }
    expect(top / all).toBeCloseTo(0.5, 3);
  });

  it("gives the counted figures of the committed feed bench under its conditions", () => {
    const { predicted, rowsPerItem } = benchCheck(measured);
    // K = 1: every store read is one D1 query, so the counted D1 queries per feed are the store reads per feed.
    expect(Math.abs(predicted.d1QueriesPerFeed - measured.feedBench.d1QueriesPerFeed)).toBeLessThan(0.01);
    expect(predicted.roundTripsPerStoreRead).toBeCloseTo(1, 6);
    // Each of the query's two lookups walks the JSON parameter, and reads the item's count or settings row:
    // about four rows per item asked, as docs/reads.md states.
    expect(rowsPerItem).toBeGreaterThan(3.6);
    expect(rowsPerItem).toBeLessThan(4.5);
  });

  it("gives the D1 queries per feed a bench run over 4 databases counted: without the central store, one per database a feed's misses fall in", () => {
    const b = measured.spreadFeedBench;
    const k = b.countDatabases;
    expect(k).toBe(4);
    const { spread } = benchCheck(measured);
    // A feed's queries are S, the databases its n misses span (n binomial in 50 with the model's M):
    // E[S] = K p1 and E[S²] = K p1 + K(K-1) p2, p1 and p2 the chances that one, and two, given databases are among them.
    const m = spread.itemMissRate;
    let mean = 0;
    let square = 0;
    for (let n = 1; n <= 50; n++) {
      const chance = Math.exp(lnChoose(50, n) + n * Math.log(m) + (50 - n) * Math.log(1 - m));
      const p1 = 1 - (1 - 1 / k) ** n;
      const p2 = 1 - 2 * (1 - 1 / k) ** n + (1 - 2 / k) ** n;
      mean += chance * k * p1;
      square += chance * (k * p1 + k * (k - 1) * p2);
    }
    expect(spread.d1QueriesPerFeedWithoutCentral).toBeCloseTo(mean, 9);
    // The bench counted the mean over its feeds: four standard errors of that mean.
    const tolerance = (4 * Math.sqrt(square - mean ** 2)) / Math.sqrt(b.feeds);
    expect(Math.abs(b.d1QueriesPerFeed - mean)).toBeLessThanOrEqual(tolerance);
    // More than two databases per feed: what the central store spares D1 at this layout.
    expect(mean).toBeGreaterThan(MAX_STORE_ROUND_TRIPS);
    expect(spread.d1QueriesPerFeed).toBeLessThan(0.01);
  });

  it("recomputes a feed's store reads and queries by the stated formula", () => {
    const load = { items: 1e6, zipf: 0.9, feedsPerSecond: 2_000, feedItems: 50, isolates: 20, locations: 10, memoryTtlS: 1, edgeTtlS: 2, countDatabases: 8 };
    const path = readPath(load);
    expect(path.feedMissRate).toBeCloseTo(1 - (1 - path.itemMissRate) ** 50, 9);
    let d1 = 0;
    let central = 0;
    for (let n = 1; n <= 50; n++) {
      const chance = Math.exp(lnChoose(50, n) + n * Math.log(path.itemMissRate) + (50 - n) * Math.log(1 - path.itemMissRate));
      const { one, two } = databasesSpanned(n, 8);
      d1 += chance * (one + 2 * two);
      central += chance * (1 - one - two);
    }
    expect(path.d1QueriesPerFeed).toBeCloseTo(d1, 9);
    expect(path.centralRequestsPerFeed).toBeCloseTo(central, 9);
    expect(path.roundTripsPerStoreRead).toBeLessThanOrEqual(MAX_STORE_ROUND_TRIPS);
    // Longer lifetimes or fewer isolates only raise the hit rate.
    expect(readPath({ ...load, edgeTtlS: 10 }).itemMissRate).toBeLessThan(path.itemMissRate);
    expect(readPath({ ...load, isolates: 1 }).itemMissRate).toBeLessThan(path.itemMissRate);
    expect(ttlHitRate(3, 1)).toBeCloseTo(0.75, 12);
  });

  it("spans databases as counting does: n items in K cells", () => {
    // Three items in three databases: all in one 3/27, in exactly two 18/27.
    expect(databasesSpanned(3, 3).one).toBeCloseTo(3 / 27, 12);
    expect(databasesSpanned(3, 3).two).toBeCloseTo(18 / 27, 12);
    // Five items in two databases: all in one 2/32, the rest in both.
    expect(databasesSpanned(5, 2)).toEqual({ one: 2 / 32, two: 1 - 2 / 32 });
  });

  it("sizes K so that a feed's D1 queries do not grow with it: past two databases feeds go to the central store", () => {
    for (const shape of [...workload.shapes, ...workload.tiers.map((t) => tierShape(t, workload))]) {
      const result = evaluate(shape, workload, measured, prices);
      const k = result.needs.d1Databases;
      expect(result.rates.d1Queries / k).toBeLessThanOrEqual(prices.d1.queriesPerSecondPerDatabase.value * 0.8);
      if (k > 2) expect(result.reads.d1QueriesPerFeed).toBeLessThan(1e-3);
      // The fewest databases that carry the load: one fewer would not.
      if (k > 3) {
        const below = needs(rates(shape, workload, measured, shapeReadPath(shape, workload, k - 1)), workload, measured, prices, shape);
        expect(below.d1Databases).toBeGreaterThan(k - 1);
      }
      expect(result.rates.storeReads).toBeCloseTo(result.rates.feeds * result.reads.storeReadsPerFeed, 6);
    }
  });
});

describe("latency, availability and background passes", () => {
  it("composes a like and a feed from the stated parts, and availability along each path", () => {
    const { result } = evaluateTier(workload.tiers[0]!, workload, measured, prices);
    const e = pathEstimate(result, workload, latency);
    const ms = latency.latencyMs;
    expect(e.likeNearMs).toBe(workload.assumptions.workerCpuMsPerRequest.value + ms.nearRegion.value + ms.objectCommit.value);
    expect(e.likeAvailability).toBeCloseTo(latency.availability.workers.value * latency.availability.durableObjects.value, 12);
    if (result.needs.d1Databases > 2) {
      expect(e.feedStore).toBe("central store");
      const store = 1 - (1 - latency.availability.centralStore.value) * (1 - latency.availability.d1.value);
      expect(e.feedAvailability).toBeCloseTo(latency.availability.workers.value * store, 12);
    }
    for (const f of [...Object.values(latency.latencyMs), ...Object.values(latency.availability)]) expect(f.source).toMatch(/https:\/\/|assumption|capacity\/prices\.json/);
  });

  it("prices and times every pass from its counted costs per item", () => {
    for (const tier of workload.tiers) {
      const { result, peak } = evaluateTier(tier, workload, measured, prices);
      // Sized for the peak, billed on the average.
      expect(result.needs).toEqual(peak.needs);
      expect(result.rates.writes).toBeCloseTo(peak.rates.writes * workload.assumptions.tierAverageToPeak.value, 6);
      const k = result.needs.d1Databases;
      const items = workload.likedItems * (result.shape.dataScale ?? 1);
      for (const pass of passes(result, workload, prices, passInputs, latency)) {
        expect(pass.usd).toBeCloseTo(priceOf(pass.work, workload, prices), 6);
        expect(pass.seconds).toBeGreaterThan(0);
        if (pass.name === "reconciliation") {
          const f = passInputs;
          const step = f.stepItems.value;
          expect(pass.units).toBe(items);
          // A step: its state queries, its index page, one read of its count rows; a key an item, one BatchGetItem per 100.
          expect(pass.work.d1Queries).toBeCloseTo((items * (f.stateQueries.value + 2)) / step, 0);
          expect(pass.work.d1RowsRead).toBeCloseTo(items * (1 + f.countLookupRows.value + f.stateRowsRead.value / step), 0);
          expect(pass.work.centralRequests).toBeCloseTo(items / f.batchGetKeys.value, 0);
          expect(pass.work.objectCalls).toBe(items);
          // The pace limits are the whole pass's: no faster than either allows, nor than its own pace.
          const fastest = Math.min(f.d1QueriesPerSecond.value / (pass.work.d1Queries / items), f.centralKeysPerSecond.value / (pass.work.centralReads / items), items / (f.targetHours.value * 3600));
          expect(pass.seconds).toBeGreaterThanOrEqual(items / fastest - 1e-6);
          // To finish in the target time at the largest step: the rate, the limits that allow it, DB's room less the state queries.
          const needed = pass.needed!;
          const rate = items / (f.targetHours.value * 3600);
          expect(needed.itemsPerSecond).toBeCloseTo(rate, 6);
          expect(needed.settings.d1QueriesPerSecond).toBe(Math.ceil((rate * (f.stateQueries.value + 2)) / f.maxStepItems.value));
          expect(needed.settings.centralKeysPerSecond).toBe(Math.ceil(rate));
          expect(needed.room.db).toBeCloseTo(spare(result, prices).db - (rate * f.stateQueries.value) / f.maxStepItems.value, 6);
          const rates = paceBounds(perUnit("reconciliation", k, f), step, defaultSettings(f), f, latency).map(([, r]) => r);
          expect(pass.seconds).toBeCloseTo(items / Math.min(...rates, items / (f.targetHours.value * 3600)), 3);
        }
        if (pass.name === "D1 rebuild") {
          // A statement per row written besides the step's queries; no central-store key.
          expect(pass.work.d1Queries).toBeCloseTo(items * ((passInputs.stateQueries.value + 2) / passInputs.stepItems.value + 1), 0);
          expect(pass.work.centralReads + pass.work.centralWrites).toBe(0);
          expect(pass.seconds).toBeGreaterThanOrEqual(pass.work.d1Queries / passInputs.d1QueriesPerSecond.value - 1e-6);
        }
        if (pass.name === "central rebuild") {
          const edges = workload.likeRecords * (result.shape.dataScale ?? 1);
          // A read and a write an item, two writes an edge, all under the pass's key limit.
          expect(pass.work.centralReads + pass.work.centralWrites).toBeCloseTo(2 * items + 2 * edges, 0);
          expect(pass.seconds).toBeGreaterThanOrEqual((2 * items + 2 * edges) / passInputs.centralKeysPerSecond.value - 1e-6);
        }
        if (pass.name === "import") {
          expect(pass.units).toBe(passInputs.importEdges);
          expect(pass.work.queueMessages).toBe(passInputs.importEdges * passInputs.import.queueMessages);
        }
      }
    }
  });
});

function lnChoose(n: number, k: number): number {
  let sum = 0;
  for (let j = 1; j <= k; j++) sum += Math.log((n - k + j) / j);
  return sum;
}

describe("the capacity model's memory of its costly answers", () => {
  it("answers a repeated question without computing it again, and keeps only the latest answers", () => {
    const asked: string[] = [];
    const square = remembered((a: number, b: number) => {
      asked.push(`${a}:${b}`);
      return a * b;
    }, 2);
    expect([square(2, 3), square(2, 3), square(3, 2)]).toEqual([6, 6, 6]);
    expect(asked).toEqual(["2:3", "3:2"]);
    // A third answer pushes out the oldest: (2, 3) is computed again, (3, 2) is still known.
    expect(square(4, 4)).toBe(16);
    expect([square(3, 2), square(2, 3)]).toEqual([6, 6]);
    expect(asked).toEqual(["2:3", "3:2", "4:4", "2:3"]);
  });
});
