import type { Counts, EventCounter, ToggleCounter } from "./counters";
import type { Placement } from "./placement";
import type { ViewerPayload } from "./viewer-batch";

// The RPC contract of the Durable Objects: what the Worker and the objects
// say to each other. Pure types, so the Worker (above) and the objects
// (below it) share them without either importing the other.

/** Per-user limits of one toggle counter, when a low standing makes them stricter than the configured ones. */
export type ToggleLimits = { perMinute: number; perDay: number };

/**
 * `askedAt`: when the user asked (ms): an edge remembers the time of its last
 * action, and a request asked before it changes nothing (I6: a pending intent
 * applied late, or a call that hung, never undoes a newer action).
 */
export type ToggleRequest = { user: string; item: string; counter: ToggleCounter; on: boolean; askedAt: number; limits?: ToggleLimits };

/** A like or unlike brought from another system: its target state and when the user asked for it (ms since the epoch). */
export type ImportedEdge = { item: string; on: boolean; at: number };

/**
 * What an imported edge did: changed the user's state, found it already so,
 * lost to a newer action of the user on the item (I6), or nothing because
 * the user is purged or deleted (shared/removal.ts).
 */
export type ImportOutcome = "applied" | "duplicate" | "superseded" | "barred";

/** One of a user's edges as the user's object holds it (the truth a rebuild copies); `at` is 0 for edges stored before edges kept their time. */
export type UserEdge = { item: string; counter: ToggleCounter; state: 0 | 1; inc: number; seq: number; at: number };

export type EventPermit = { allowed: true } | { allowed: false; retryAfter: number };

export type ToggleResult =
  | { kind: "rate_limited"; retryAfter: number }
  | { kind: "unchanged" }
  /** The user acted on this edge after the request was asked: nothing done. */
  | { kind: "superseded" }
  /** Committed by the user's object; the item side gets it after the answer. */
  | { kind: "changed" }
  /** The user is purged or deleted (shared/removal.ts): liking and saving are refused. */
  | { kind: "barred" };

export type ItemSnapshot = { counts: Counts; asOf: number };

/** Event counts gathered by one Worker isolate since its last flush. */
export type EventBatch = {
  counts: Partial<Record<EventCounter, number>>;
  /** Events sent with an Idempotency-Key: each counts once per key within 24 hours. */
  keyed: readonly { counter: EventCounter; key: string }[];
  /** The distinct users who viewed the item in this batch, for its unique-viewer sketch. */
  viewers?: ViewerPayload;
};

/**
 * What a child reports: its absolute toggle counts (so a repeated report is
 * harmless), its own sequence number (so an older report is ignored) and its
 * cumulative write count (so the head can measure the item's write rate).
 */
export type ChildReport = { likes: number; saves: number; seq: number; writes: number };

/**
 * A change's outcome: applied here, or refused because the edge belongs to a
 * child: a new edge of a hot item (its child follows from the placement), or
 * an edge the head handed over to child `home`.
 */
export type ApplyResult = { status: "applied"; counts: Counts | null } | { status: "moved"; placement: Placement; home?: number };

export type ItemDescription = {
  counts: Counts;
  /** The count snapshot's sequence number: the version D1 and the central store hold once the pipeline caught up. */
  seq: number;
  hot: boolean;
  shards: number;
  children: { index: number; likes: number; saves: number; seq: number; writes: number; reported_at: string }[];
  writes_per_sec: number;
  /**
   * Calls the head served since it started (after a split, `applies` should
   * be a small share of the item's writes), and the commits it made.
   */
  calls: { applies: number; refused: number; reports: number; reads: number; commits: number };
};
