import { ConfigSchema } from "../shared/config";
import type { FeedBench, Measured } from "./model";

type Costs = Record<string, number | undefined>;
/** The parts of `npm run bench` reports the model reads: a write run's per-like costs, a feed run's per-feed read costs. */
type BenchReport = {
  options?: { vars?: Record<string, string>; connections?: number; seconds?: number; hotShare?: number; items?: number; zipf?: number };
  summary?: { perOp?: Record<string, { opsPerSecond?: number }> };
  environment?: { loadAverageAtEnd?: number[]; cpus?: string };
  costs?: { perLike?: Costs; likes?: number };
  readCosts?: Costs | null;
};

function pick(costs: Costs | undefined, name: string, report: string): number {
  const value = costs?.[name];
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new Error(`${report} has no counted cost "${name}": run npm run bench with --scenario write (likes) and --scenario feed (feeds)`);
  }
  return value;
}

/**
 * The per-like and per-feed costs a bench run counted from /metrics deltas,
 * as the model takes them, and the feed runs the read model is checked
 * against: one at the default layout and one over K >= 3 databases.
 */
export function measuredFromReports(writeReport: unknown, feedReport: unknown, spreadFeedReport: unknown, source: string): Measured {
  const write = (writeReport as BenchReport).costs?.perLike;
  // Measured on feeds over a cold long tail, nearly every feed misses some item: taken as the cost of a miss.
  const feed = (feedReport as BenchReport).readCosts ?? undefined;
  const like = (name: string) => pick(write, name, "the write report");
  const run = writeReport as BenchReport;
  return {
    source,
    conditions:
      `${run.costs?.likes ?? "?"} likes and unlikes from ${run.options?.connections ?? "?"} connections over ${run.options?.seconds ?? "?"} s, ` +
      `${Math.round((run.options?.hotShare ?? 0) * 100)} % of them on one hot item, on ${run.environment?.cpus ?? "a machine"} ` +
      `with a load average of ${run.environment?.loadAverageAtEnd?.[0] ?? "?"}`,
    hotShards: Number((writeReport as BenchReport).options?.vars?.HOT_SHARDS ?? 16),
    perWrite: {
      workerRequests: 1,
      objectCalls: like("objectCalls"),
      commits: like("commits"),
      rowsWritten: like("rowsWritten"),
      alarmsSet: like("alarmsSet"),
      queueMessages: like("queueMessages"),
      d1Queries: like("d1Queries"),
      d1RowsWritten: like("d1RowsWritten"),
      centralWrites: like("centralStoreWrites"),
    },
    perFeedMiss: {
      objectCalls: pick(feed, "objectCalls", "the feed report"),
      d1Queries: pick(feed, "d1Queries", "the feed report"),
      d1RowsRead: pick(feed, "d1RowsRead", "the feed report"),
    },
    feedBench: feedBench(feedReport as BenchReport, feed),
    spreadFeedBench: spreadFeedBench(spreadFeedReport as BenchReport),
  };
}

function spreadFeedBench(run: BenchReport): FeedBench {
  const bench = feedBench(run, run.readCosts ?? undefined);
  if (bench.countDatabases < 3) throw new Error(`the spread feed report ran at K = ${bench.countDatabases}: run the feed bench with --var COUNT_DATABASES=4`);
  return bench;
}

/**
 * The feed run's conditions: `npm start` runs one isolate at one location,
 * with K = 1 and the Cache API tier off (READ_CACHE_EDGE_TTL_MS=0) unless the
 * run's vars set them.
 */
function feedBench(run: BenchReport, feed: Costs | undefined): FeedBench {
  const vars = run.options?.vars ?? {};
  const ops = Object.values(run.summary?.perOp ?? {})[0]?.opsPerSecond;
  const value = (x: number | undefined, name: string) => pick({ [name]: x }, name, "the feed report");
  return {
    items: value(run.options?.items, "items"),
    zipf: value(run.options?.zipf, "zipf"),
    feedsPerSecond: value(ops, "opsPerSecond"),
    feeds: pick(feed, "requests", "the feed report"),
    connections: value(run.options?.connections, "connections"),
    countDatabases: Number(vars.COUNT_DATABASES ?? 1),
    memoryTtlMs: Number(vars.READ_CACHE_MEMORY_TTL_MS ?? ConfigSchema.parse({}).READ_CACHE_MEMORY_TTL_MS),
    edgeTtlMs: Number(vars.READ_CACHE_EDGE_TTL_MS ?? 0),
    d1QueriesPerFeed: pick(feed, "d1Queries", "the feed report"),
    d1RowsReadPerFeed: pick(feed, "d1RowsRead", "the feed report"),
  };
}
