import { z } from "zod";
import { COUNTER_TYPES, TOGGLE_COUNTERS } from "./counters";

/**
 * One message on the `plaudit-events` queue: part of one emission of one
 * object. A head's first message carries the item's total counts with the
 * head's own sequence number; every message may carry edge changes. Each
 * message is acknowledged back to its `origin` under its own `emission` id.
 */
export const EMISSION_VERSION = 1;

/** Queues take at most 128 KB a message; stay well under it, JSON included. */
export const MAX_MESSAGE_BYTES = 100_000;
/** Queues take at most 100 messages a `sendBatch`. */
export const MAX_SEND_BATCH = 100;

/** The namespaces whose objects emit; the aggregator acknowledges back through them. */
export const ORIGIN_NAMESPACES = ["ITEM_COUNTER", "ITEM_SHARD"] as const;

const Count = z.number().int().nonnegative();

/**
 * `[user, counter, state, inc, seq, at]`: compact, because a message holds
 * hundreds of them. `at` is when the user asked for the state (ms since the
 * epoch); messages queued before edges kept their time lack it.
 */
export const EmittedEdge = z.tuple([
  z.string().min(1),
  z.enum(TOGGLE_COUNTERS),
  z.union([z.literal(0), z.literal(1)]),
  z.number().int().positive(),
  z.number().int().nonnegative(),
  z.number().int().nonnegative().optional(),
]);
export type EmittedEdge = z.infer<typeof EmittedEdge>;

export const CountSnapshot = z.object({
  seq: z.number().int().positive(),
  counts: z.object(Object.fromEntries(COUNTER_TYPES.map((c) => [c, Count])) as Record<(typeof COUNTER_TYPES)[number], typeof Count>),
  /** The head's HyperLogLog estimate of distinct viewers (absent from emitters that predate it). */
  unique_viewers: Count.optional(),
  /**
   * When the head took these counts (ms since the epoch; absent from emitters
   * that predate it): what a reader compares a user's own write with, since a
   * row stored after the write may still hold counts taken before it.
   */
  at: Count.optional(),
});
export type CountSnapshot = z.infer<typeof CountSnapshot>;

const ItemKey = z.string().regex(/^[a-z]+:(0|[1-9][0-9]{0,19})$/);

export const Emission = z.object({
  v: z.literal(EMISSION_VERSION),
  origin: z.object({ ns: z.enum(ORIGIN_NAMESPACES), name: z.string().min(1) }),
  emission: z.string().min(1),
  item: ItemKey,
  snapshot: CountSnapshot.optional(),
  edges: z.array(EmittedEdge),
}).refine((e) => !e.snapshot || (e.origin.ns === "ITEM_COUNTER" && e.origin.name === e.item), {
  // A child's counts are partial: taking them as the item's total would be wrong.
  error: "only an item's head emits its counts",
});
export type Emission = z.infer<typeof Emission>;
export type Origin = Emission["origin"];

/**
 * The queue's other message: an item's head asks for its stores to be
 * compared with it now (durable-objects/lib/recheck.ts sends it,
 * workers/pipeline/recheck.ts answers it). It carries no counts: the check
 * reads the object itself, so a late or repeated request is only an extra check.
 */
export const RecheckRequest = z.object({
  v: z.literal(EMISSION_VERSION),
  kind: z.literal("recheck"),
  item: ItemKey,
});
export type RecheckRequest = z.infer<typeof RecheckRequest>;

/** Most items one reconcile slice checks: one index page, one consumer batch's worth of checks. */
export const MAX_SLICE_ITEMS = 100;

/**
 * A share of reconciliation handed to a queue consumer: check the next
 * `limit` items of the index after `after` (workers/pipeline/reconcile-slices.ts).
 * `sample`: part of the run's random sample; `drift`: the items around one
 * the reconciler found drifted. Idempotent: a repeated slice is an extra check.
 */
export const ReconcileSlice = z.object({
  v: z.literal(EMISSION_VERSION),
  kind: z.literal("reconcile_slice"),
  reason: z.enum(["sample", "drift"]),
  after: z.object({ draw: z.number().int().min(-1).max(2 ** 32), key: z.string().max(64) }),
  limit: z.number().int().min(1).max(MAX_SLICE_ITEMS),
});
export type ReconcileSlice = z.infer<typeof ReconcileSlice>;

/**
 * An edge's version as one number that orders like `(inc, seq)`, for stores
 * that compare a single attribute. WARNING: never change this encoding; the
 * central store compares new versions with ones written under it.
 * A user's sequence stays below 2^32 (about 4 billion changes) and the
 * incarnation below 2^21, so the result is a safe integer.
 */
export function edgeVersion(inc: number, seq: number): number {
  return inc * 2 ** 32 + seq;
}
