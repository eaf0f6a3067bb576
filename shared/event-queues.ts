import { fnv1a } from "./hash";

/**
 * Which of the Q event queues carries an item's emissions: the high half of
 * the item key's FNV-1a, modulo Q. The count databases take the hash's low
 * bits, and FNV-1a's lowest bits follow the key's characters closely, so the
 * high half keeps an item's queue independent of its database. Unlike the count databases, Q may change on a live deployment:
 * a queue holds nothing for long, every queue has the same consumer, and an
 * emission is idempotent wherever it travels.
 */
export function eventQueueIndex(item: string, queues: number): number {
  return (fnv1a(item) >>> 16) % queues;
}

/** The producer binding of queue i: `EVENTS` first, then `EVENTS_1`, `EVENTS_2`, ... */
export function eventQueueBinding(index: number): string {
  return index === 0 ? "EVENTS" : `EVENTS_${index}`;
}

/** The queue's name in wrangler.toml: `plaudit-events`, then `plaudit-events-1`, ... (each with its own `-dlq`). */
export function eventQueueName(index: number): string {
  return index === 0 ? "plaudit-events" : `plaudit-events-${index}`;
}
