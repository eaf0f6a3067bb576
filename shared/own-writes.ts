import type { Config } from "./config";

/**
 * How long after a write's commit the user's object starts delivering it:
 * longer than the answer's way out of the runtime takes on a thread that is
 * not backed up, so the item side's apply and commit of the change do not
 * run ahead of the answer on a thread they share (locally every object's;
 * on Cloudflare an isolate's). A timing, not an order: under load the
 * delivery can still come first. The outbox and its alarm hold the change
 * meanwhile, as they do during a delivery.
 */
export const USER_DELIVERY_DELAY_MS = 20;

/** How long a user's object waits for the item side before its alarm takes the delivery over. */
export const USER_DELIVERY_TIMEOUT_MS = 3_000;

/**
 * How long after a write's answer its edge can take to be in the counts the
 * item's head emits while the user's object and the item are healthy: the
 * user's object starts its delivery USER_DELIVERY_DELAY_MS after the commit
 * and delivers within USER_DELIVERY_TIMEOUT_MS, the item commits
 * within its micro-batch window, and a hot item's child reports to the head
 * every CHILD_REPORT_MS. A stored row whose counts the head took earlier than
 * that may lack the write, however late the row was stored.
 */
export function ownWriteReachMs(settings: Pick<Config, "ITEM_COMMIT_WINDOW_MS" | "CHILD_REPORT_MS">): number {
  return USER_DELIVERY_DELAY_MS + USER_DELIVERY_TIMEOUT_MS + settings.ITEM_COMMIT_WINDOW_MS + settings.CHILD_REPORT_MS;
}
