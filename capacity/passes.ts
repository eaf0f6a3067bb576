// Background passes per tier: a full reconciliation, a full rebuild of D1 or
// of the central store, an import of a billion edges. Counted costs per item
// (capacity/passes.json, read from the code) times list prices; time bound by
// what each store has to spare at the tier's average load. Pure.
import type { LatencyInputs } from "./latency";
import type { Prices, ShapeResult, Workload } from "./model";

type Cited = { value: number; source: string };
export type PassInputs = {
  source: string;
  importEdges: number;
  consumerInvocationsPerQueue: Cited;
  checksInFlight: Cited;
  sliceItems: Cited;
  rebuildStepItems: Cited;
  edgesPerObjectPage: Cited;
  edgesPerRebuildStep: Cited;
  reconcile: Record<"objectCalls" | "d1Queries" | "d1RowsRead" | "centralReads", Cited>;
  import: { source: string } & Record<"objectCalls" | "alarmsSet" | "objectRowsWritten" | "queueMessages" | "d1RowsWritten" | "centralWrites" | "workerRequests", number>;
};

/** What a pass costs in total. */
export type Work = {
  objectCalls: number;
  alarmsSet: number;
  objectRowsWritten: number;
  d1Queries: number;
  d1RowsRead: number;
  d1RowsWritten: number;
  centralReads: number;
  centralWrites: number;
  queueMessages: number;
  workerRequests: number;
};
export type PassName = "reconciliation" | "D1 rebuild" | "central rebuild" | "import";
export type Pass = { name: PassName; units: number; unit: string; work: Work; usd: number; seconds: number; boundBy: string };

const none: Work = { objectCalls: 0, alarmsSet: 0, objectRowsWritten: 0, d1Queries: 0, d1RowsRead: 0, d1RowsWritten: 0, centralReads: 0, centralWrites: 0, queueMessages: 0, workerRequests: 0 };
const times = (w: Partial<Work>, n: number): Work => Object.fromEntries(Object.keys(none).map((k) => [k, (w[k as keyof Work] ?? 0) * n])) as Work;
const plus = (a: Work, b: Work): Work => Object.fromEntries(Object.keys(none).map((k) => [k, a[k as keyof Work] + b[k as keyof Work]])) as Work;

/**
 * Per item (or edge), with K databases:
 * - reconciliation: the item's check (passes.json) plus its slice's share of
 *   the index page (one query per database, up to a slice of rows from each)
 *   and of its queue message;
 * - D1 rebuild: the object's snapshot, a share of the step's index page, its
 *   D1 read (readD1Rows: one query per database the step's items fall in, the
 *   count and settings rows), one row written, one write batch per database per step;
 * - central rebuild: the object's snapshot, a GetItem and a conditional write
 *   per item, then per edge two conditional writes and a share of a page of the
 *   user's object;
 * - import: the counted costs of docs/benchmarks.md, and one D1 batch per
 *   database per consumer batch of up to 100 messages.
 */
export function perUnit(pass: PassName, k: number, f: PassInputs): Work {
  const slice = f.sliceItems.value;
  const step = f.rebuildStepItems.value;
  switch (pass) {
    case "reconciliation": {
      const c = f.reconcile;
      return times({ objectCalls: c.objectCalls.value, d1Queries: c.d1Queries.value + k / slice, d1RowsRead: c.d1RowsRead.value + k, centralReads: c.centralReads.value, queueMessages: 1 / slice }, 1);
    }
    case "D1 rebuild":
      return times({
        objectCalls: 1,
        d1Queries: (k + 2 * Math.min(k, step)) / step,
        d1RowsRead: k + 2,
        d1RowsWritten: 1,
        workerRequests: 1 / step,
      }, 1);
    case "central rebuild":
      return times({ objectCalls: 1, d1Queries: k / step, d1RowsRead: k, centralReads: 1, centralWrites: 1, workerRequests: 1 / step }, 1);
    case "import": {
      const i = f.import;
      return { ...none, ...times({ objectCalls: i.objectCalls, alarmsSet: i.alarmsSet, objectRowsWritten: i.objectRowsWritten, queueMessages: i.queueMessages, d1RowsWritten: i.d1RowsWritten, centralWrites: i.centralWrites, workerRequests: i.workerRequests }, 1), d1Queries: Math.min(k, 100) / 100 };
    }
  }
}

/** The edges' part of a central rebuild, per edge. */
export function perEdgeOfCentralRebuild(f: PassInputs): Work {
  return times({ objectCalls: 1 / f.edgesPerObjectPage.value, centralWrites: 2, workerRequests: 1 / f.edgesPerRebuildStep.value }, 1);
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

/** What each store has to spare per second at the tier's average load, up to its limit (not its headroom). */
export function spare(result: ShapeResult, p: Prices) {
  const r = result.rates;
  const n = result.needs;
  const lwt = p.scylla.lwtSlowdown.value * p.scylla.replicationFactor.value;
  return {
    d1Queries: n.d1Databases * p.d1.queriesPerSecondPerDatabase.value - r.d1Queries,
    centralOps: n.scyllaCores * p.scylla.opsPerSecondPerCore.value - r.centralWrites * lwt - r.centralReadKeys,
    queueMessages: n.queues * p.queues.messagesPerSecondPerQueue.value - r.queueMessages,
    lwt,
  };
}

/**
 * A pass's time: its units over the slowest of its bounds. Each store gives
 * what it has to spare over the units' use of it; a reconciliation's queue
 * consumers check `checksInFlight` items at once per invocation, each check
 * three sequential requests near the consumer (object, D1, central store).
 * Objects are not a bound: every item has its own.
 */
export function passTime(work: Work, units: number, result: ShapeResult, p: Prices, f: PassInputs, l: LatencyInputs, consumers: boolean): { seconds: number; boundBy: string } {
  const s = spare(result, p);
  const per = (x: number) => x / units;
  const bounds: [string, number][] = [];
  if (work.d1Queries > 0) bounds.push([`D1 queries (${Math.round(s.d1Queries).toLocaleString("en-US")}/s to spare)`, s.d1Queries / per(work.d1Queries)]);
  const centralOps = work.centralReads + work.centralWrites * s.lwt;
  if (centralOps > 0) bounds.push([`central-store operations (${Math.round(s.centralOps).toLocaleString("en-US")}/s to spare)`, s.centralOps / per(centralOps)]);
  if (work.queueMessages > 0) bounds.push([`queue messages (${Math.round(s.queueMessages).toLocaleString("en-US")}/s to spare)`, s.queueMessages / per(work.queueMessages)]);
  if (consumers) {
    const ms = l.latencyMs;
    const checkS = (3 * ms.nearRegion.value + ms.d1Query.value + ms.centralStore.value) / 1000;
    bounds.push(["queue consumers", (f.consumerInvocationsPerQueue.value * f.checksInFlight.value) / checkS]);
  }
  const [boundBy, rate] = bounds.sort((a, b) => a[1] - b[1])[0]!;
  return { seconds: rate > 0 ? units / rate : Infinity, boundBy };
}

/** The four passes of a tier, over its data set (items and edges scaled with it). */
export function passes(result: ShapeResult, w: Workload, p: Prices, f: PassInputs, l: LatencyInputs): Pass[] {
  const scale = result.shape.dataScale ?? 1;
  const k = result.needs.d1Databases;
  const items = w.likedItems * scale;
  const edges = w.likeRecords * scale;
  const build = (name: PassName, units: number, unit: string, work: Work, consumers = false): Pass => ({
    name,
    units,
    unit,
    work,
    usd: priceOf(work, w, p),
    ...passTime(work, units, result, p, f, l, consumers),
  });
  return [
    build("reconciliation", items, "items", times(perUnit("reconciliation", k, f), items), true),
    build("D1 rebuild", items, "items", times(perUnit("D1 rebuild", k, f), items)),
    build("central rebuild", items, "items", plus(times(perUnit("central rebuild", k, f), items), times(perEdgeOfCentralRebuild(f), edges))),
    build("import", f.importEdges, "edges", times(perUnit("import", k, f), f.importEdges)),
  ];
}
