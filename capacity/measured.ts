import type { Measured } from "./model";

type Costs = Record<string, number | undefined>;
type BenchReport = { options?: { vars?: Record<string, string> }; costs?: { perLike?: Costs; perFeed?: Costs; feedCacheHitRate?: number } };

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
  const feed = (feedReport as BenchReport).costs?.perFeed;
  const like = (name: string) => pick(write, name, "the write report");
  return {
    source,
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
      centralWrites: like("centralWrites"),
    },
    perFeedMiss: {
      objectCalls: pick(feed, "objectCallsPerMiss", "the feed report"),
      d1Queries: pick(feed, "d1QueriesPerMiss", "the feed report"),
      d1RowsRead: pick(feed, "d1RowsReadPerMiss", "the feed report"),
    },
    feedCacheHitRate: (feedReport as BenchReport).costs?.feedCacheHitRate ?? null,
  };
}
