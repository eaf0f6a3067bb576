import type { z } from "zod";

/** A request message of the events queue, parsed, beside the message to ack or retry. */
export type RequestMessage<T> = { message: Message<unknown>; request: T };

/**
 * Splits an events-queue batch into the messages one request schema matches
 * and the rest, which stays one batch for the next consumer (an unknown
 * message there is retried alone and dead-lettered, as before).
 */
export function takeRequests<T>(batch: MessageBatch<unknown>, schema: z.ZodType<T>): { requests: RequestMessage<T>[]; others: MessageBatch<unknown> } {
  const requests: RequestMessage<T>[] = [];
  const others: Message<unknown>[] = [];
  for (const message of batch.messages) {
    const parsed = schema.safeParse(message.body);
    if (parsed.success) requests.push({ message, request: parsed.data });
    else others.push(message);
  }
  if (requests.length === 0) return { requests, others: batch };
  return {
    requests,
    others: {
      queue: batch.queue,
      metadata: batch.metadata,
      messages: others,
      ackAll: () => others.forEach((m) => m.ack()),
      retryAll: (options) => others.forEach((m) => m.retry(options)),
    },
  };
}
