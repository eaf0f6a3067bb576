// Background passes per tier: a full reconciliation, a full rebuild of D1 or
// of the central store, an import of a billion edges. Costs per item read
// from the code (capacity/passes.json) times list prices; a pass's time bound
// by its own pace limits (workers/pipeline/pass-pace.ts) and, for the limits
// that would finish it in a stated time, whether the stores have room. Pure.
import type { LatencyInputs } from "./latency";
import type { Prices, ShapeResult, Workload } from "./model";

type Cited = { value: number; source: string };
type CitedKeys =
  | "targetHours"
  | "stepItems"
  | "maxStepItems"
  | "concurrency"
  | "d1QueriesPerSecond"
  | "centralKeysPerSecond"
  | "stateQueries"
  | "stateRowsRead"
  | "countLookupRows"
  | "batchGetKeys"
  | "checksInFlight"
  | "edgesPerObjectPage"
  | "edgesPerRebuildStep";
export type PassInputs = { source: string; importEdges: number } & Record<CitedKeys, Cited> & {
    import: { source: string } & Record<"objectCalls" | "alarmsSet" | "objectRowsWritten" | "queueMessages" | "d1RowsWritten" | "centralWrites" | "workerRequests", number>;
  };

/** What a pass costs in total. centralReads and centralWrites are keys; centralRequests the calls carrying them. */
export type Work = {
  objectCalls: number;
  alarmsSet: number;
  objectRowsWritten: number;
  d1Queries: number;
  d1StateQueries: number;
  d1RowsRead: number;
  d1RowsWritten: number;
  centralReads: number;
  centralWrites: number;
  centralRequests: number;
  queueMessages: number;
  workerRequests: number;
};
export type PassName = "reconciliation" | "D1 rebuild" | "central rebuild" | "import";
/** The pace limits a pass runs under (shared/config.ts PASS_*). */
export type PassSettings = { stepItems: number; concurrency: number; d1QueriesPerSecond: number; centralKeysPerSecond: number };
/** The settings that would finish a pass in the target time, and whether the stores have room for that pace. */
export type Needed = { settings: PassSettings; itemsPerSecond: number; room: { db: number; countDatabases: number; central: number } };
export type Pass = { name: PassName; units: number; unit: string; work: Work; usd: number; seconds: number; boundBy: string; needed: Needed | null };

const none: Work = {
  objectCalls: 0,
  alarmsSet: 0,
  objectRowsWritten: 0,
  d1Queries: 0,
  d1StateQueries: 0,
  d1RowsRead: 0,
  d1RowsWritten: 0,
  centralReads: 0,
  centralWrites: 0,
  centralRequests: 0,
  queueMessages: 0,
  workerRequests: 0,
};
const times = (w: Partial<Work>, n: number): Work => Object.fromEntries(Object.keys(none).map((k) => [k, (w[k as keyof Work] ?? 0) * n])) as Work;
const plus = (a: Work, b: Work): Work => Object.fromEntries(Object.keys(none).map((k) => [k, a[k as keyof Work] + b[k as keyof Work]])) as Work;

export const defaultSettings = (f: PassInputs): PassSettings => ({
  stepItems: f.stepItems.value,
  concurrency: f.concurrency.value,
  d1QueriesPerSecond: f.d1QueriesPerSecond.value,
  centralKeysPerSecond: f.centralKeysPerSecond.value,
});

/**
 * Per item, a step of S items (workers/pipeline/pass-work.ts counts the same
 * queries and keys for the pace). Every step: its range's row read and commit
 * in DB (stateQueries), one index page from the range's database (an index
 * row an item), the next step's queue message.
 * - reconciliation: the item's object (emissionState), one D1 read of the
 *   step's count rows, its key in a BatchGetItem per 100 (checkItems);
 * - D1 rebuild (every row lost): the object, the same D1 read, a statement per
 *   row written (one batch per database);
 * - central rebuild (every count lost): the object, a GetItem and a
 *   conditional write per item (rebuild-counts.ts);
 * - import: the counted costs of docs/benchmarks.md, and one D1 batch per
 *   database per consumer batch of up to 100 messages.
 */
export function perUnit(pass: PassName, k: number, f: PassInputs, s = f.stepItems.value): Work {
  const state = { d1StateQueries: f.stateQueries.value / s, queueMessages: 1 / s };
  const stepRows = f.stateRowsRead.value / s;
  switch (pass) {
    case "reconciliation":
      return times({
        ...state,
        objectCalls: 1,
        d1Queries: (f.stateQueries.value + 2) / s,
        d1RowsRead: 1 + f.countLookupRows.value + stepRows,
        centralReads: 1,
        centralRequests: 1 / f.batchGetKeys.value,
      }, 1);
    case "D1 rebuild":
      return times({ ...state, objectCalls: 1, d1Queries: (f.stateQueries.value + 2) / s + 1, d1RowsRead: 1 + f.countLookupRows.value + stepRows, d1RowsWritten: 1 }, 1);
    case "central rebuild":
      return times({ ...state, objectCalls: 1, d1Queries: (f.stateQueries.value + 1) / s, d1RowsRead: 1 + stepRows, centralReads: 1, centralWrites: 1, centralRequests: 2 }, 1);
    case "import": {
      const i = f.import;
      return { ...none, ...times({ objectCalls: i.objectCalls, alarmsSet: i.alarmsSet, objectRowsWritten: i.objectRowsWritten, queueMessages: i.queueMessages, d1RowsWritten: i.d1RowsWritten, centralWrites: i.centralWrites, centralRequests: i.centralWrites, workerRequests: i.workerRequests }, 1), d1Queries: Math.min(k, 100) / 100 };
    }
  }
}

/** The edges' part of a central rebuild, per edge: its user's object page share, two conditional writes, a share of a user-walk step (at most edgesPerRebuildStep edges). */
export function perEdgeOfCentralRebuild(f: PassInputs): Work {
  const step = f.edgesPerRebuildStep.value;
  return times({ objectCalls: 1 / f.edgesPerObjectPage.value, centralWrites: 2, centralRequests: 2, d1Queries: (f.stateQueries.value + 1) / step, d1StateQueries: f.stateQueries.value / step, queueMessages: 1 / step }, 1);
}

export function priceOf(work: Work, w: Workload, p: Prices): number {
  const million = (n: number, usd: number) => (n / 1e6) * usd;
  const dos = p.durableObjects;
  const gbSeconds = work.objectCalls * (w.assumptions.objectHandlerMs.value / 1000) * dos.memoryGb.value;
  return (
    million(work.objectCalls + work.alarmsSet, dos.requestsPerMillion.usd) +
    million(gbSeconds, dos.gbSecondsPerMillion.usd) +
    million(work.objectRowsWritten + work.alarmsSet, dos.rowsWrittenPerMillion.usd) +
    million(work.d1RowsRead, p.d1.rowsReadPerMillion.usd) +
    million(work.d1RowsWritten, p.d1.rowsWrittenPerMillion.usd) +
    million(work.queueMessages * p.queues.operationsPerMessage.value, p.queues.operationsPerMillion.usd) +
    million(work.workerRequests, p.workers.requestsPerMillion.usd)
  );
}

/** What each store has to spare per second at the tier's average load, up to its limit (not its headroom). DB: one database's share. */
export function spare(result: ShapeResult, p: Prices) {
  const r = result.rates;
  const n = result.needs;
  const lwt = p.scylla.lwtSlowdown.value * p.scylla.replicationFactor.value;
  const d1Queries = n.d1Databases * p.d1.queriesPerSecondPerDatabase.value - r.d1Queries;
  return {
    d1Queries,
    db: d1Queries / n.d1Databases,
    centralOps: n.scyllaCores * p.scylla.opsPerSecondPerCore.value - r.centralWrites * lwt - r.centralReadKeys,
    queueMessages: n.queues * p.queues.messagesPerSecondPerQueue.value - r.queueMessages,
    lwt,
  };
}

/**
 * A step's time, each call a round trip near the consumer plus its service
 * time: the objects `checksInFlight` at a time, the D1 queries one after
 * another (a D1 rebuild's statements, one per row written, in one batch), the
 * central-store calls `checksInFlight` at a time.
 */
export function stepSeconds(perStep: Work, f: PassInputs, l: LatencyInputs): number {
  const ms = l.latencyMs;
  const near = ms.nearRegion.value;
  const inFlight = f.checksInFlight.value;
  const d1RoundTrips = perStep.d1Queries - perStep.d1RowsWritten + (perStep.d1RowsWritten > 0 ? 1 : 0);
  return (Math.ceil(perStep.objectCalls / inFlight) * near + d1RoundTrips * (near + ms.d1Query.value) + Math.ceil(perStep.centralRequests / inFlight) * (near + ms.centralStore.value)) / 1000;
}

/**
 * The pace a pass keeps under `s`, units a second (workers/pipeline/pass-pace.ts):
 * the D1 queries and central keys of a step against the pass's limits (shared
 * by the ranges in flight, so the pass as a whole), and `concurrency` ranges
 * each one step at a time.
 */
export function paceBounds(perUnitWork: Work, stepUnits: number, s: PassSettings, f: PassInputs, l: LatencyInputs): [string, number][] {
  const keys = perUnitWork.centralReads + perUnitWork.centralWrites;
  const bounds: [string, number][] = [[`PASS_CONCURRENCY ${s.concurrency}`, (s.concurrency * stepUnits) / stepSeconds(times(perUnitWork, stepUnits), f, l)]];
  if (perUnitWork.d1Queries > 0) bounds.push([`PASS_D1_QUERIES_PER_SECOND ${s.d1QueriesPerSecond}`, s.d1QueriesPerSecond / perUnitWork.d1Queries]);
  if (keys > 0) bounds.push([`PASS_CENTRAL_KEYS_PER_SECOND ${s.centralKeysPerSecond}`, s.centralKeysPerSecond / keys]);
  return bounds;
}

const slowest = (bounds: [string, number][]): [string, number] => bounds.sort((a, b) => a[1] - b[1])[0]!;

/**
 * The settings that would finish `units` in `seconds` at the largest step
 * (fewest state queries in DB), and the room each store keeps at that pace:
 * DB (one database's spare, less the steps' state queries), the count
 * databases (their spare, less the index and count queries), the central
 * store (its spare operations, a conditional write costing lwt).
 */
export function neededFor(pass: PassName, units: number, seconds: number, result: ShapeResult, p: Prices, f: PassInputs, l: LatencyInputs, edges = 0): Needed {
  const stepItems = f.maxStepItems.value;
  const k = result.needs.d1Databases;
  const work = perUnit(pass, k, f, stepItems);
  const whole = pass === "central rebuild" ? plus(times(work, units), times(perEdgeOfCentralRebuild(f), edges)) : times(work, units);
  const rate = units / seconds;
  const perSecond = times(whole, 1 / seconds);
  const stepsAtOnce = (perStepSeconds: number, stepUnits: number, unitsPerSecond: number) => (unitsPerSecond * perStepSeconds) / stepUnits;
  const itemStep = stepSeconds(times(work, stepItems), f, l);
  const ranges =
    pass === "central rebuild"
      ? stepsAtOnce(itemStep, stepItems, rate) + stepsAtOnce(stepSeconds(times(perEdgeOfCentralRebuild(f), f.edgesPerRebuildStep.value), f, l), f.edgesPerRebuildStep.value, edges / seconds)
      : stepsAtOnce(itemStep, stepItems, rate);
  const s = spare(result, p);
  return {
    itemsPerSecond: rate,
    settings: {
      stepItems,
      concurrency: Math.ceil(ranges),
      d1QueriesPerSecond: Math.ceil(perSecond.d1Queries),
      centralKeysPerSecond: Math.ceil(perSecond.centralReads + perSecond.centralWrites),
    },
    room: {
      db: s.db - perSecond.d1StateQueries,
      countDatabases: s.d1Queries - perSecond.d1Queries,
      central: s.centralOps - perSecond.centralReads - perSecond.centralWrites * s.lwt,
    },
  };
}

/** The four passes of a tier, over its data set (items and edges scaled with it). */
export function passes(result: ShapeResult, w: Workload, p: Prices, f: PassInputs, l: LatencyInputs): Pass[] {
  const scale = result.shape.dataScale ?? 1;
  const k = result.needs.d1Databases;
  const items = w.likedItems * scale;
  const edges = w.likeRecords * scale;
  const target = f.targetHours.value * 3600;
  const settings = defaultSettings(f);
  const paced = (name: Exclude<PassName, "import">): Pass => {
    const unitWork = perUnit(name, k, f);
    const bounds = paceBounds(unitWork, settings.stepItems, settings, f, l);
    // Reconciliation also keeps its own pace: every item once per RECONCILE_FULL_PASS_HOURS (workers/pipeline/pass-tick.ts).
    if (name === "reconciliation") bounds.push([`RECONCILE_FULL_PASS_HOURS ${f.targetHours.value}`, items / target]);
    const [boundBy, rate] = slowest(bounds);
    let seconds = items / rate;
    let work = times(unitWork, items);
    let bound = boundBy;
    if (name === "central rebuild") {
      const edgeWork = perEdgeOfCentralRebuild(f);
      const [edgeBound, edgeRate] = slowest(paceBounds(edgeWork, f.edgesPerRebuildStep.value, settings, f, l));
      seconds += edges / edgeRate;
      work = plus(work, times(edgeWork, edges));
      bound = `items: ${boundBy}; edges: ${edgeBound}`;
    }
    return { name, units: items, unit: "items", work, usd: priceOf(work, w, p), seconds, boundBy: bound, needed: neededFor(name, items, target, result, p, f, l, name === "central rebuild" ? edges : 0) };
  };
  const importWork = times(perUnit("import", k, f), f.importEdges);
  const s = spare(result, p);
  const importBounds: [string, number][] = [
    [`D1 queries (${Math.round(s.d1Queries).toLocaleString("en-US")}/s to spare)`, s.d1Queries / (importWork.d1Queries / f.importEdges)],
    [`central-store operations (${Math.round(s.centralOps).toLocaleString("en-US")}/s to spare)`, s.centralOps / ((importWork.centralWrites * s.lwt) / f.importEdges)],
    [`queue messages (${Math.round(s.queueMessages).toLocaleString("en-US")}/s to spare)`, s.queueMessages / (importWork.queueMessages / f.importEdges)],
  ];
  const [importBound, importRate] = slowest(importBounds);
  return [
    paced("reconciliation"),
    paced("D1 rebuild"),
    paced("central rebuild"),
    { name: "import", units: f.importEdges, unit: "edges", work: importWork, usd: priceOf(importWork, w, p), seconds: f.importEdges / importRate, boundBy: importBound, needed: null },
  ];
}
