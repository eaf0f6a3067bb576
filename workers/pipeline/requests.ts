import type { z } from "zod";

/** A request message of the events queue, parsed, beside the message to ack or retry. */
export type RequestMessage<T> = { message: Message<unknown>; request: T };

/** A request's schema: an object whose `kind` is one literal, which tells its messages from the rest. */
export type RequestSchema<T> = z.ZodType<T> & { shape: { kind: z.ZodLiteral<string> } };

/** The `kind` a message's body names, if it names one. */
function kindOf(body: unknown): unknown {
  return typeof body === "object" && body !== null ? (body as { kind?: unknown }).kind : undefined;
}

/**
 * Splits an events-queue batch into the messages one request schema matches
 * and the rest, which stays one batch for the next consumer (an unknown
 * message there is retried alone and dead-lettered, as before). Only a body
 * of the schema's kind is parsed: an emission has no kind, and a failed
 * parse builds an error object for every issue, garbage made for every
 * emission of every batch by each of the request schemas.
 */
export function takeRequests<T>(batch: MessageBatch<unknown>, schema: RequestSchema<T>): { requests: RequestMessage<T>[]; others: MessageBatch<unknown> } {
  const kind = schema.shape.kind.value;
  const requests: RequestMessage<T>[] = [];
  const others: Message<unknown>[] = [];
  for (const message of batch.messages) {
    const parsed = kindOf(message.body) === kind ? schema.safeParse(message.body) : null;
    if (parsed?.success) requests.push({ message, request: parsed.data });
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
