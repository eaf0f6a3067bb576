import type { Measured } from "./model";

type Costs = Record<string, number | undefined>;
/** The parts of `npm run bench` reports the model reads: a write run's per-like costs, a feed run's per-feed read costs. */
type BenchReport = {
  options?: { vars?: Record<string, string>; connections?: number; seconds?: number; hotShare?: number };
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

/** The per-like and per-feed costs a bench run counted from /metrics deltas, as the model takes them. */
export function measuredFromReports(writeReport: unknown, feedReport: unknown, source: string): Measured {
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
    feedCacheHitRate: null,
  };
}
