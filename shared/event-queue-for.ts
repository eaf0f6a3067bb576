import { config } from "./config";
import { eventQueueBinding, eventQueueIndex, eventQueueName } from "./event-queues";

export type EventQueue = { queue: Queue; name: string };

/**
 * The queue an item's emissions travel on, one of EVENT_QUEUES (Q): one queue
 * carries about 5,000 messages a second, so a deployment past that spreads
 * its items over several. A binding missing from wrangler.toml is a
 * deployment error, said plainly.
 */
export function eventQueueFor(env: Env, item: string): EventQueue {
  const index = eventQueueIndex(item, config(env).EVENT_QUEUES);
  const queue = (env as unknown as Record<string, Queue | undefined>)[eventQueueBinding(index)];
  if (!queue) throw new Error(`EVENT_QUEUES needs a queue producer binding named ${eventQueueBinding(index)} in wrangler.toml`);
  return { queue, name: eventQueueName(index) };
}
