// The capacity and cost model: counted per-operation costs (from a bench
// run) times the customer's load, priced with the vendors' list prices.
// Pure: the same inputs always give the same figures.

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
  assumptions: Record<
    "feedCacheHitRate" | "workerCpuMsPerRequest" | "objectHandlerMs" | "hotShareOfLikes" | "bytesPerEdge" | "bytesPerD1Item" | "tierAverageToPeak",
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
  /** The share of feeds the bench served with no D1 query (one isolate: an upper bound). */
  feedCacheHitRate: number | null;
};

export const SECONDS_PER_MONTH = 30 * 24 * 3600;
/** Every sized resource keeps this much headroom under its limit. */
export const HEADROOM = 0.8;

export type Rates = {
  writes: number;
  feeds: number;
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

export type Needs = { queues: number; d1Databases: number; d1ByQueries: number; d1ByStorage: number; scyllaCores: number; hotItemCeiling: number; itemsAtCeiling: number };

export type CostLine = { component: string; monthlyUsd: number };

export type ShapeResult = { shape: Shape; rates: Rates; needs: Needs; costs: CostLine[]; totalUsd: number };

export type LimitHit = { limit: string; ratio: number };

export function rates(shape: Shape, w: Workload, m: Measured): Rates {
  const writes = shape.likesPerSecond + shape.unlikesPerSecond;
  const feeds = shape.countReadsPerSecond / w.feedItems;
  const feedMisses = feeds * (1 - w.assumptions.feedCacheHitRate.value);
  const queueMessages = writes * m.perWrite.queueMessages;
  return {
    writes,
    feeds,
    workerRequests: writes * m.perWrite.workerRequests + feeds,
    // An alarm that fires is a request too; each one set fires once.
    objectRequests: writes * (m.perWrite.objectCalls + m.perWrite.alarmsSet) + feedMisses * m.perFeedMiss.objectCalls,
    // setAlarm is billed as a row written.
    objectRowsWritten: writes * (m.perWrite.rowsWritten + m.perWrite.alarmsSet),
    queueMessages,
    queueOperations: queueMessages * 3,
    d1Queries: writes * m.perWrite.d1Queries + feedMisses * m.perFeedMiss.d1Queries,
    d1RowsWritten: writes * m.perWrite.d1RowsWritten,
    d1RowsRead: feedMisses * m.perFeedMiss.d1RowsRead,
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
  const coresForWrites = (r.centralWrites * p.scylla.lwtSlowdown.value * rf) / (p.scylla.opsPerSecondPerCore.value * HEADROOM);
  const coresForData = (storage.central * rf) / (p.scylla.gbPerCore.value * HEADROOM);
  const hotItemCeiling = m.hotShards * p.durableObjects.writesPerSecondPerObject.value;
  return {
    queues: Math.max(1, Math.ceil(r.queueMessages / (p.queues.messagesPerSecondPerQueue.value * HEADROOM))),
    d1Databases: Math.max(1, d1ByQueries, d1ByStorage),
    d1ByQueries,
    d1ByStorage,
    scyllaCores: Math.ceil(Math.max(coresForWrites, coresForData, rf)),
    hotItemCeiling,
    itemsAtCeiling: Math.floor((shape.likesPerSecond * w.assumptions.hotShareOfLikes.value) / hotItemCeiling),
  };
}

export function monthlyCosts(r: Rates, n: Needs, w: Workload, p: Prices, shape: Shape): CostLine[] {
  const month = (perSecond: number, perMillion: number) => (perSecond * SECONDS_PER_MONTH * perMillion) / 1e6;
  const storage = storageGb(w, shape.dataScale);
  const dos = p.durableObjects;
  const gbSeconds = r.objectRequests * (w.assumptions.objectHandlerMs.value / 1000) * dos.memoryGb.value;
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

export function evaluate(shape: Shape, w: Workload, m: Measured, p: Prices): ShapeResult {
  const r = rates(shape, w, m);
  const n = needs(r, w, m, p, shape);
  const costs = monthlyCosts(r, n, w, p, shape);
  return { shape, rates: r, needs: n, costs, totalUsd: costs.reduce((sum, c) => sum + c.monthlyUsd, 0) };
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
 * A tier's shape: its like rate as peak, unlikes and reads in the workload's
 * average proportions, and a data set in proportion to its like rate (the
 * customer's data set belongs to their 500,000/s peak).
 */
export function tierShape(tier: Tier, w: Workload): Shape {
  const base = w.shapes[0]!;
  const average = tier.likesPerSecond * w.assumptions.tierAverageToPeak.value;
  return {
    dataScale: tier.likesPerSecond / w.dataSetPeakLikesPerSecond,
    name: `${tier.likesPerSecond.toLocaleString("en-US")}/s tier`,
    likesPerSecond: average,
    unlikesPerSecond: (average * base.unlikesPerSecond) / base.likesPerSecond,
    countReadsPerSecond: (average * base.countReadsPerSecond) / base.likesPerSecond,
  };
}
