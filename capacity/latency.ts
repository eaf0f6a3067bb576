// Production latency and availability per path, composed from published
// figures (capacity/latency.json). Pure.
import type { ShapeResult, Workload } from "./model";

export type Figure = { value: number; source: string };
export type LatencyInputs = {
  retrieved: string;
  latencyMs: Record<"nearRegion" | "farRegion" | "objectCommit" | "cacheApi" | "d1Query" | "centralStore", Figure>;
  availability: Record<"workers" | "queues" | "durableObjects" | "d1" | "centralStore", Figure>;
};

export type PathEstimate = {
  /** A like: the Worker, the user's object near the reader (or on another continent), its commit. */
  likeNearMs: number;
  likeFarMs: number;
  /** A feed answered from a cache tier, and one that needs the store (near and far from it). */
  feedMemoryMs: number;
  feedEdgeMs: number;
  feedStoreNearMs: number;
  feedStoreFarMs: number;
  /** Where a feed's misses go at this K. */
  feedStore: "D1 (read replicas)" | "central store";
  likeAvailability: number;
  /** A fresh answer; and any answer, a marked stale one included (the last-known copies). */
  feedAvailability: number;
  feedAnsweredAvailability: number;
};

/**
 * like = CPU + RTT(location → user's object) + commit; the item side, the
 * queue and the stores are after the answer, off its path.
 * feed = CPU [+ Cache API] [+ RTT(location → store) + store query]: at K <= 2
 * the misses go to D1 in a session (a replica near the reader, or the
 * primary far away), past two databases to the central store in its one
 * data centre. Availability multiplies what is on the path; the central
 * store falls back to D1 for a feed, so either one answering is enough.
 */
export function pathEstimate(result: ShapeResult, w: Workload, f: LatencyInputs): PathEstimate {
  const ms = (name: keyof LatencyInputs["latencyMs"]) => f.latencyMs[name].value;
  const up = (name: keyof LatencyInputs["availability"]) => f.availability[name].value;
  const cpu = w.assumptions.workerCpuMsPerRequest.value;
  const central = result.reads.centralShare > 0.5;
  const query = central ? ms("centralStore") : ms("d1Query");
  const store = central ? 1 - (1 - up("centralStore")) * (1 - up("d1")) : up("d1");
  return {
    likeNearMs: cpu + ms("nearRegion") + ms("objectCommit"),
    likeFarMs: cpu + ms("farRegion") + ms("objectCommit"),
    feedMemoryMs: cpu,
    feedEdgeMs: cpu + ms("cacheApi"),
    feedStoreNearMs: cpu + ms("cacheApi") + ms("nearRegion") + query,
    feedStoreFarMs: cpu + ms("cacheApi") + ms("farRegion") + query,
    feedStore: central ? "central store" : "D1 (read replicas)",
    likeAvailability: up("workers") * up("durableObjects"),
    feedAvailability: up("workers") * store,
    feedAnsweredAvailability: up("workers"),
  };
}
