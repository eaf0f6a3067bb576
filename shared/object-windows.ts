// The timers an object keeps after a like so that later likes can share its
// commits. While one is pending the object cannot hibernate, and Cloudflare
// bills its duration (capacity/model.ts prices them; docs/benchmarks.md, "What
// a like costs", weighs them against the rows they save).
import { USER_DELIVERY_DELAY_MS } from "./own-writes";

/**
 * Delivered marks ride on the user's next like's commit; once the object has
 * delivered nothing for this long (durable-objects/lib/soon.ts) they get a
 * commit of their own: a user who keeps liking every second or two pays no
 * extra commit, and the wait stays well short of the ten seconds or more of
 * quiet after which an object may be evicted (a crash before it only costs a
 * redelivery).
 */
export const DELIVERED_PERSIST_MS = 2_000;

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
 * commit window (its answer waits for that commit) to the delivered mark's
 * window; the item's, from its commit window through the emission's interval
 * to its acknowledgement's window (the wait for the acknowledgement itself
 * holds no timer).
 */
export function awakeSecondsPerLike(itemCommitWindowMs: number): { user: number; item: number } {
  return {
    user: (USER_DELIVERY_DELAY_MS + itemCommitWindowMs + DELIVERED_PERSIST_MS) / 1000,
    item: (itemCommitWindowMs + EMIT_INTERVAL_MS + ACK_PERSIST_MS) / 1000,
  };
}
