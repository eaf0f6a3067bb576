// The capacity and cost model: counted per-operation costs (from a bench
// run) times the customer's load, priced with the vendors' list prices.
// Pure: the same inputs always give the same figures.
import { ConfigSchema } from "../shared/config";
import { awakeSecondsPerLike } from "../shared/object-windows";
import { readPath, zipfExponentFor, type ReadPath } from "./reads";

export type Priced = { usd: number; source: string };
export type Limit = { value: number; source: string };

export type Prices = {
  retrieved: string;
  workers: { requestsPerMillion: Priced; cpuMsPerMillion: Priced };
  durableObjects: {
    requestsPerMillion: Priced;
    gbSecondsPerMillion: Priced;
    rowsWrittenPerMillion: Priced;
    rowsReadPerMillion: Priced;
    storageGbMonth: Priced;
    memoryGb: Limit;
    writesPerSecondPerObject: Limit;
  };
  queues: { operationsPerMillion: Priced; operationsPerMessage: Limit; messagesPerSecondPerQueue: Limit };
  d1: {
    rowsReadPerMillion: Priced;
    rowsWrittenPerMillion: Priced;
    storageGbMonth: Priced;
    queriesPerSecondPerDatabase: Limit;
    gbPerDatabase: Limit;
  };
  scylla: { opsPerSecondPerCore: Limit; lwtSlowdown: Limit; replicationFactor: Limit; coreMonth: Priced; gbPerCore: Limit };
};

export type Shape = {
  name: string;
  likesPerSecond: number;
  unlikesPerSecond: number;
  countReadsPerSecond: number;
  /** The share of the customer's data set this shape stores (1 unless said). */
  dataScale?: number;
};
export type Tier = { likesPerSecond: number; writeP99Ms: number; readP99Ms: number; servers: string; monthlyUsd: number };
export type Assumption = { value: number; why: string };

export type Workload = {
  source: string;
  dailyUsers: number;
  items: number;
  likedItems: number;
  likeRecords: number;
  /** The peak like rate the customer's data set belongs to: smaller or larger deployments scale their data by it. */
  dataSetPeakLikesPerSecond: number;
  feedItems: number;
  shapes: Shape[];
  tiers: Tier[];
  /** What sets the read caches' hit rate besides the lifetimes (shared/config.ts). */
  reads: Record<"topItemShare" | "locations" | "isolateFeedsPerSecond", Assumption>;
  assumptions: Record<
    "workerCpuMsPerRequest" | "objectHandlerMs" | "hotShareOfLikes" | "bytesPerEdge" | "bytesPerD1Item" | "tierAverageToPeak",
    Assumption
  >;
};

/** What one like (or unlike) and one feed that misses every cache cost, counted by the bench from /metrics. */
export type Measured = {
  source: string;
  /** How the write run was driven and how busy the machine was: coalescing, and so the per-like figures, depend on it. */
  conditions: string;
  hotShards: number;
  perWrite: {
    workerRequests: number;
    objectCalls: number;
    commits: number;
    rowsWritten: number;
    alarmsSet: number;
    queueMessages: number;
    d1Queries: number;
    d1RowsWritten: number;
    centralWrites: number;
  };
  perFeedMiss: { objectCalls: number; d1Queries: number; d1RowsRead: number };
  /** The feed run's conditions and counted figures, against which the read model is checked. */
  feedBench: FeedBench;
  /** The same over K >= 3 databases, so that a feed's misses span more of them than its D1 bound: the layout's part of the model is checked against it. */
  spreadFeedBench: FeedBench;
};

/** A feed bench run: one isolate and one location, on `npm start`'s layout and lifetimes. */
export type FeedBench = {
  items: number;
  zipf: number;
  feedsPerSecond: number;
  /** Feeds served while the costs were counted. */
  feeds: number;
  /** Feeds the bench kept in flight at once: above one, feeds that miss together may share a store read. */
  connections: number;
  countDatabases: number;
  memoryTtlMs: number;
  edgeTtlMs: number;
  d1QueriesPerFeed: number;
  d1RowsReadPerFeed: number;
};

export const SECONDS_PER_MONTH = 30 * 24 * 3600;
/** Every sized resource keeps this much headroom under its limit. */
export const HEADROOM = 0.8;

export type Rates = {
  writes: number;
  feeds: number;
  storeReads: number;
  centralReadRequests: number;
  centralReadKeys: number;
  workerRequests: number;
  objectRequests: number;
  objectRowsWritten: number;
  queueMessages: number;
  queueOperations: number;
  d1Queries: number;
  d1RowsWritten: number;
  d1RowsRead: number;
  centralWrites: number;
};

export type Needs = {
  queues: number;
  d1Databases: number;
  d1ByQueries: number;
  d1ByStorage: number;
  scyllaCores: number;
  scyllaCoresForReads: number;
  hotItemCeiling: number;
  itemsAtCeiling: number;
};

export type CostLine = { component: string; monthlyUsd: number };

export type ShapeResult = { shape: Shape; reads: ReadPath; rates: Rates; needs: Needs; costs: CostLine[]; totalUsd: number };

export type LimitHit = { limit: string; ratio: number };

/** The read caches' lifetimes every deployment gets unless it sets them (shared/config.ts). */
export function cacheLifetimesS(): { memory: number; edge: number } {
  const defaults = ConfigSchema.parse({});
  return { memory: defaults.READ_CACHE_MEMORY_TTL_MS / 1000, edge: defaults.READ_CACHE_EDGE_TTL_MS / 1000 };
}

/** The items a shape's feeds read: its liked items, with the customer's Zipf shape (the top share taking the hot share). */
export function readItems(w: Workload, shape: Shape): { items: number; zipf: number } {
  const items = Math.round(w.likedItems * (shape.dataScale ?? 1));
  return { items, zipf: zipfExponentFor(items, w.reads.topItemShare.value, w.assumptions.hotShareOfLikes.value) };
}

/** The read path of a shape's feeds over K count databases. */
export function shapeReadPath(shape: Shape, w: Workload, k: number): ReadPath {
  const feeds = shape.countReadsPerSecond / w.feedItems;
  const ttl = cacheLifetimesS();
  return readPath({
    ...readItems(w, shape),
    feedsPerSecond: feeds,
    feedItems: w.feedItems,
    isolates: Math.max(1, feeds / w.reads.isolateFeedsPerSecond.value),
    locations: w.reads.locations.value,
    memoryTtlS: ttl.memory,
    edgeTtlS: ttl.edge,
    countDatabases: k,
  });
}

/** The read model run under a feed bench's conditions. */
export function benchReadPath(b: FeedBench) {
  return readPath({
    items: b.items,
    zipf: b.zipf,
    feedsPerSecond: b.feedsPerSecond,
    feedItems: 50,
    isolates: 1,
    locations: 1,
    memoryTtlS: b.memoryTtlMs / 1000,
    edgeTtlS: b.edgeTtlMs / 1000,
    countDatabases: b.countDatabases,
  });
}

/** D1 rows a feed query reads per item it asks for, from the feed bench: its rows over the misses the read model gives it. */
export function d1RowsPerItem(m: Measured): number {
  return m.feedBench.d1RowsReadPerFeed / benchReadPath(m.feedBench).d1ItemsPerFeed;
}

export function rates(shape: Shape, w: Workload, m: Measured, reads: ReadPath): Rates {
  const writes = shape.likesPerSecond + shape.unlikesPerSecond;
  const feeds = shape.countReadsPerSecond / w.feedItems;
  const storeReads = feeds * reads.storeReadsPerFeed;
  const queueMessages = writes * m.perWrite.queueMessages;
  return {
    writes,
    feeds,
    storeReads,
    centralReadRequests: feeds * reads.centralRequestsPerFeed,
    centralReadKeys: feeds * reads.centralKeysPerFeed,
    workerRequests: writes * m.perWrite.workerRequests + feeds,
    // An alarm that fires is a request too; each one set fires once.
    objectRequests: writes * (m.perWrite.objectCalls + m.perWrite.alarmsSet) + storeReads * m.perFeedMiss.objectCalls,
    // setAlarm is billed as a row written.
    objectRowsWritten: writes * (m.perWrite.rowsWritten + m.perWrite.alarmsSet),
    queueMessages,
    queueOperations: queueMessages * 3,
    d1Queries: writes * m.perWrite.d1Queries + feeds * reads.d1QueriesPerFeed,
    d1RowsWritten: writes * m.perWrite.d1RowsWritten,
    d1RowsRead: feeds * reads.d1ItemsPerFeed * d1RowsPerItem(m),
    centralWrites: writes * m.perWrite.centralWrites,
  };
}

/** Stored data in GB; `scale` shrinks the customer's data set for a smaller deployment. */
export function storageGb(w: Workload, scale = 1): { objects: number; d1: number; central: number } {
  const edgeBytes = w.likeRecords * w.assumptions.bytesPerEdge.value * scale;
  return {
    // Each edge is kept by the user's object and by the item's.
    objects: (2 * edgeBytes) / 1e9,
    d1: (w.likedItems * w.assumptions.bytesPerD1Item.value * scale) / 1e9,
    central: edgeBytes / 1e9,
  };
}

export function needs(r: Rates, w: Workload, m: Measured, p: Prices, shape: Shape): Needs {
  const storage = storageGb(w, shape.dataScale);
  const d1ByQueries = Math.ceil(r.d1Queries / (p.d1.queriesPerSecondPerDatabase.value * HEADROOM));
  const d1ByStorage = Math.ceil(storage.d1 / (p.d1.gbPerDatabase.value * HEADROOM));
  const rf = p.scylla.replicationFactor.value;
  const perCore = p.scylla.opsPerSecondPerCore.value * HEADROOM;
  const coresForWrites = (r.centralWrites * p.scylla.lwtSlowdown.value * rf) / perCore;
  // A feed's batch read is eventually consistent: one replica answers each key.
  const coresForReads = r.centralReadKeys / perCore;
  const coresForData = (storage.central * rf) / (p.scylla.gbPerCore.value * HEADROOM);
  const hotItemCeiling = m.hotShards * p.durableObjects.writesPerSecondPerObject.value;
  return {
    queues: Math.max(1, Math.ceil(r.queueMessages / (p.queues.messagesPerSecondPerQueue.value * HEADROOM))),
    d1Databases: Math.max(1, d1ByQueries, d1ByStorage),
    d1ByQueries,
    d1ByStorage,
    scyllaCores: Math.ceil(Math.max(coresForWrites + coresForReads, coresForData, rf)),
    scyllaCoresForReads: Math.ceil(coresForReads),
    hotItemCeiling,
    itemsAtCeiling: Math.floor((shape.likesPerSecond * w.assumptions.hotShareOfLikes.value) / hotItemCeiling),
  };
}

/**
 * The seconds a like or unlike holds objects unable to hibernate, billed as
 * duration (shared/object-windows.ts): its user's object always (an upper
 * bound: likes of one object within a window share it), its item's off the hot
 * items only (a hot item is awake anyway, its windows shared by its many
 * likes).
 */
export function likeAwakeSeconds(w: Workload): number {
  const awake = objectAwakeSeconds();
  return awake.user + (1 - w.assumptions.hotShareOfLikes.value) * awake.item;
}

/** What a like alone holds each of its objects awake, at the deployed commit window. */
export function objectAwakeSeconds(): { user: number; item: number } {
  return awakeSecondsPerLike(ConfigSchema.parse({}).ITEM_COMMIT_WINDOW_MS);
}

export function monthlyCosts(r: Rates, n: Needs, w: Workload, p: Prices, shape: Shape): CostLine[] {
  const month = (perSecond: number, perMillion: number) => (perSecond * SECONDS_PER_MONTH * perMillion) / 1e6;
  const storage = storageGb(w, shape.dataScale);
  const dos = p.durableObjects;
  const gbSeconds =
    (r.objectRequests * (w.assumptions.objectHandlerMs.value / 1000) + (shape.likesPerSecond + shape.unlikesPerSecond) * likeAwakeSeconds(w)) *
    dos.memoryGb.value;
  return [
    { component: "Workers requests", monthlyUsd: month(r.workerRequests, p.workers.requestsPerMillion.usd) },
    { component: "Workers CPU", monthlyUsd: month(r.workerRequests * w.assumptions.workerCpuMsPerRequest.value, p.workers.cpuMsPerMillion.usd) },
    { component: "Durable Objects requests", monthlyUsd: month(r.objectRequests, dos.requestsPerMillion.usd) },
    { component: "Durable Objects duration", monthlyUsd: month(gbSeconds, dos.gbSecondsPerMillion.usd) },
    { component: "Durable Objects rows written", monthlyUsd: month(r.objectRowsWritten, dos.rowsWrittenPerMillion.usd) },
    { component: "Durable Objects storage", monthlyUsd: storage.objects * dos.storageGbMonth.usd },
    { component: "Queues", monthlyUsd: month(r.queueOperations, p.queues.operationsPerMillion.usd) },
    { component: "D1 rows written", monthlyUsd: month(r.d1RowsWritten, p.d1.rowsWrittenPerMillion.usd) },
    { component: "D1 rows read", monthlyUsd: month(r.d1RowsRead, p.d1.rowsReadPerMillion.usd) },
    { component: "D1 storage", monthlyUsd: storage.d1 * p.d1.storageGbMonth.usd },
    { component: "ScyllaDB cores", monthlyUsd: n.scyllaCores * p.scylla.coreMonth.usd },
  ];
}

/**
 * A shape's figures at the layout it needs. K depends on the feeds' D1
 * queries, which depend on K (misses over more than two databases go to the
 * central store), so K grows from 1 until the load it carries fits it.
 */
export function evaluate(shape: Shape, w: Workload, m: Measured, p: Prices): ShapeResult {
  const tried = new Set<number>();
  let k = 1;
  for (;;) {
    tried.add(k);
    const reads = shapeReadPath(shape, w, k);
    const r = rates(shape, w, m, reads);
    const n = needs(r, w, m, p, shape);
    if (n.d1Databases <= k) {
      // A jump past two databases may overshoot: the fewest that still carry the load.
      const fewest = Math.max(3, n.d1Databases);
      if (k > fewest && !tried.has(fewest)) {
        k = fewest;
        continue;
      }
      const costs = monthlyCosts(r, { ...n, d1Databases: k }, w, p, shape);
      return { shape, reads, rates: r, needs: { ...n, d1Databases: k }, costs, totalUsd: costs.reduce((sum, c) => sum + c.monthlyUsd, 0) };
    }
    // Past two databases a feed's misses leave D1, so K = 3 may need far fewer databases than K = 2 did.
    k = k < 3 ? k + 1 : n.d1Databases;
  }
}

/**
 * How far a shape's load goes past each limit of a deployment configured no
 * wider than one queue and one D1 database (1 means at the limit). The
 * largest ratio is the first limit that a deployment growing toward this load
 * hits; every ratio over 1 is a setting to raise (Q queues, K databases).
 */
export function limitsCrossed(result: ShapeResult, w: Workload, p: Prices): LimitHit[] {
  const r = result.rates;
  const storage = storageGb(w, result.shape.dataScale);
  const hits: LimitHit[] = [
    { limit: `one queue: ${p.queues.messagesPerSecondPerQueue.value.toLocaleString("en-US")} messages/s`, ratio: r.queueMessages / p.queues.messagesPerSecondPerQueue.value },
    { limit: `one D1 database: ${p.d1.queriesPerSecondPerDatabase.value.toLocaleString("en-US")} queries/s`, ratio: r.d1Queries / p.d1.queriesPerSecondPerDatabase.value },
    { limit: `one D1 database: ${p.d1.gbPerDatabase.value} GB`, ratio: storage.d1 / p.d1.gbPerDatabase.value },
  ];
  return hits.sort((a, b) => b.ratio - a.ratio);
}

/**
 * A tier's shape at a share of its peak (1: the peak; the workload's
 * average-to-peak ratio by default): reads and unlikes in the workload's
 * average proportions, and a data set in proportion to its like rate (the
 * customer's data set belongs to their 500,000/s peak).
 */
export function tierShape(tier: Tier, w: Workload, share = w.assumptions.tierAverageToPeak.value): Shape {
  const base = w.shapes[0]!;
  const likes = tier.likesPerSecond * share;
  return {
    dataScale: tier.likesPerSecond / w.dataSetPeakLikesPerSecond,
    name: `${tier.likesPerSecond.toLocaleString("en-US")}/s tier`,
    likesPerSecond: likes,
    unlikesPerSecond: (likes * base.unlikesPerSecond) / base.likesPerSecond,
    countReadsPerSecond: (likes * base.countReadsPerSecond) / base.likesPerSecond,
  };
}

/**
 * A tier sized for its peak and billed on its average: K, Q and the ScyllaDB
 * cores are the peak's, the usage-billed lines the average's. `peak` is the
 * tier at its peak (its first limit is the peak's).
 */
export function evaluateTier(tier: Tier, w: Workload, m: Measured, p: Prices): { result: ShapeResult; peak: ShapeResult } {
  const peak = evaluate(tierShape(tier, w, 1), w, m, p);
  const shape = tierShape(tier, w);
  const reads = shapeReadPath(shape, w, peak.needs.d1Databases);
  const r = rates(shape, w, m, reads);
  const costs = monthlyCosts(r, peak.needs, w, p, shape);
  return { peak, result: { shape, reads, rates: r, needs: peak.needs, costs, totalUsd: costs.reduce((sum, c) => sum + c.monthlyUsd, 0) } };
}
