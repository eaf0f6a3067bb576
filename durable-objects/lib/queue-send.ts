import { metrics } from "../../metrics/recorder";
import { config } from "../../shared/config";
import { withDeadline } from "../../shared/deadline";
import { eventQueueFor } from "../../shared/event-queue-for";

/**
 * Sends messages on the event queue `key` hashes to (eventQueueFor), in one
 * call, under QUEUE_SEND_TIMEOUT_MS, counted in
 * `plaudit_queue_messages_total{queue,event="sent"}` once the queue took
 * them. Every message plaudit sends is safe to send twice (its consumer
 * dedups or only moves forward), which is what makes the deadline sound.
 */
export async function sendToQueue(env: Env, key: string, bodies: readonly unknown[], options: { delaySeconds?: number } = {}): Promise<void> {
  if (bodies.length === 0) return;
  const { queue, name } = eventQueueFor(env, key);
  const work =
    bodies.length === 1
      ? queue.send(bodies[0], { contentType: "json", ...options })
      : queue.sendBatch(
          bodies.map((body) => ({ body, contentType: "json" as const })),
          options,
        );
  await withDeadline(work, config(env).QUEUE_SEND_TIMEOUT_MS, "queue send");
  metrics.count("queue_messages_total", { queue: name, event: "sent" }, bodies.length);
}
