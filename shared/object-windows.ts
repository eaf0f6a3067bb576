// The windows an object keeps after a like so that later likes can share its
// commits. The short ones are timers: while one is pending the object cannot
// hibernate, and Cloudflare bills its duration (capacity/model.ts prices them;
// docs/benchmarks.md, "What a like costs", weighs them against the rows they
// save). The long ones, the sweeps, are alarms, which hold the object in nothing.
import { USER_DELIVERY_DELAY_MS } from "./own-writes";

/**
 * The user's sweep alarm, set by the commit of a burst's first change: it
 * redelivers what a crash left in the outbox, and stores in one commit the
 * delivered marks (a like's own commit only adds to the outbox, and reads
 * no edge to find them; a repeat's commit takes them). So a user whose likes come
 * within this long of a burst's first pays one commit for all their marks,
 * and an object that delivered everything holds no timer: the marks wait in
 * memory. The sweep comes before the 10 s of inactivity after which the
 * platform may hibernate the object (and the local runtime evict it), so
 * the marks are stored before they can be lost; an eviction before it only
 * costs a redelivery, which the item side answers without counting again.
 */
export const OUTBOX_SWEEP_MS = 8_000;

/** An item's object emits at most about once per this interval while it changes. */
export const EMIT_INTERVAL_MS = 1_000;

/**
 * The item's sweep, set by the commit of a burst's first change (or sooner,
 * when the resend time is): it stores in one commit the aggregator's
 * acknowledgements of the burst's emissions that no later apply's commit
 * took, so an item holds no timer while it waits for them. It comes, as the
 * user's does, before the 10 s of inactivity after which an idle object may
 * hibernate; an eviction before it only costs a resend, which the stores
 * refuse as not newer.
 */
export const ACK_SWEEP_MS = 8_000;

/**
 * Acknowledgements a child got for its reports to its head, not folded into
 * one of its commits within this long, get a commit of their own: an idle
 * child must not be evicted with them in memory only, or it would wake up to
 * report again. A child lives only while its item is hot, and awake anyway.
 */
export const ACK_PERSIST_MS = 2_000;

/**
 * The seconds a like holds objects unable to hibernate when nothing else
 * keeps them awake: the user's, from the delivery's delay through the item's
 * commit window (its answer waits for that commit); the item's, from its
 * commit window through the emission's interval. What each then waits for
 * (the delivered marks, the aggregator's acknowledgement) waits on a sweep
 * alarm, which holds no timer.
 */
export function awakeSecondsPerLike(itemCommitWindowMs: number): { user: number; item: number } {
  return {
    user: (USER_DELIVERY_DELAY_MS + itemCommitWindowMs) / 1000,
    item: (itemCommitWindowMs + EMIT_INTERVAL_MS) / 1000,
  };
}
