import type { Config } from "./config";

/** How long a user's object waits for the item side before its alarm takes the delivery over. */
export const USER_DELIVERY_TIMEOUT_MS = 3_000;

/**
 * How long after a write's answer its edge can take to be in the counts the
 * item's head emits while the user's object and the item are healthy: the
 * user's object delivers within USER_DELIVERY_TIMEOUT_MS, the item commits
 * within its micro-batch window, and a hot item's child reports to the head
 * every CHILD_REPORT_MS. A stored row whose counts the head took earlier than
 * that may lack the write, however late the row was stored.
 */
export function ownWriteReachMs(settings: Pick<Config, "ITEM_COMMIT_WINDOW_MS" | "CHILD_REPORT_MS">): number {
  return USER_DELIVERY_TIMEOUT_MS + settings.ITEM_COMMIT_WINDOW_MS + settings.CHILD_REPORT_MS;
}
