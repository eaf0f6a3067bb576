import { config } from "../../shared/config";
import { eventQueueBinding } from "../../shared/event-queues";

/**
 * How many messages wait in the event queues, summed over the Q queues; null
 * when the platform gives no figure (a binding without `metrics()`). Every
 * imported edge becomes an emission on the item side, so an import that
 * outruns the consumers only grows this number: it is the signal an import
 * call is refused on, never the import's own rate.
 */
export async function queueBacklog(env: Env): Promise<number | null> {
  const queues = config(env).EVENT_QUEUES;
  let total = 0;
  for (let index = 0; index < queues; index++) {
    const queue = (env as unknown as Record<string, Queue | undefined>)[eventQueueBinding(index)];
    if (typeof queue?.metrics !== "function") return null;
    total += (await queue.metrics()).backlogCount;
  }
  return total;
}

/**
 * Seconds an importer should wait before its next call: long enough for the
 * consumers to drain about the excess (a consumer batch takes 100 messages),
 * at least one, and short enough that a drained queue is not left idle.
 */
export function backlogRetryAfter(backlog: number, limit: number): number {
  return Math.min(30, Math.max(1, Math.ceil((backlog - limit) / 100)));
}
