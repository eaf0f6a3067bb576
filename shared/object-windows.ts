// The windows an object keeps after a like so that later likes can share its
// commits. The item's are timers: while one is pending the object cannot
// hibernate, and Cloudflare bills its duration (capacity/model.ts prices them;
// docs/benchmarks.md, "What a like costs", weighs them against the rows they
// save). The user's is an alarm, which holds the object in nothing.
import { USER_DELIVERY_DELAY_MS } from "./own-writes";

/**
 * The user's sweep alarm, set by the commit of a burst's first change: it
 * redelivers what a crash left in the outbox, and stores in one commit the
 * delivered marks no like's commit picked up. So a user whose likes come
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
 * Acknowledgements an item's objects got for what they sent (a head's
 * emissions, a child's reports to its head) not folded into one of their
 * commits within this long get a commit of their own: an idle object must
 * not be evicted with them in memory only, or it would wake up to send
 * everything again.
 */
export const ACK_PERSIST_MS = 2_000;

/**
 * The seconds a like holds objects unable to hibernate when nothing else
 * keeps them awake: the user's, from the delivery's delay through the item's
 * commit window (its answer waits for that commit; the delivered mark then
 * waits for the sweep alarm, which holds no timer); the item's, from its
 * commit window through the emission's interval to its acknowledgement's
 * window (the wait for the acknowledgement itself holds no timer).
 */
export function awakeSecondsPerLike(itemCommitWindowMs: number): { user: number; item: number } {
  return {
    user: (USER_DELIVERY_DELAY_MS + itemCommitWindowMs) / 1000,
    item: (itemCommitWindowMs + EMIT_INTERVAL_MS + ACK_PERSIST_MS) / 1000,
  };
}
