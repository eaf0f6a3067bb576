import { scheduleFlush } from "../../metrics/flush";
import { metrics } from "../../metrics/recorder";
import type { DrainIntentsRequest } from "../../shared/intents";
import { log } from "../../shared/log";
import { answerDrain } from "../likes/intents";
import type { RequestMessage } from "./requests";

const CONCURRENCY = 16;

/**
 * The queued drains of pending intents (workers/likes/intents.ts): one per
 * user, however many messages asked for it, users in parallel. A drain that
 * failed (D1 did not answer) is retried by the queue.
 */
export async function answerDrains(env: Env, queue: string, requests: readonly RequestMessage<DrainIntentsRequest>[], ctx?: ExecutionContext): Promise<void> {
  const byUser = new Map<string, RequestMessage<DrainIntentsRequest>[]>();
  for (const request of requests) byUser.set(request.request.user, [...(byUser.get(request.request.user) ?? []), request]);
  const users = [...byUser.values()];
  let retried = 0;
  let next = 0;
  const worker = async () => {
    while (next < users.length) {
      const messages = users[next++]!;
      // The highest attempt speaks for the user: its delays are the ones still running.
      const request = messages.reduce((a, b) => (b.request.attempt > a.request.attempt ? b : a)).request;
      try {
        await answerDrain(env, request);
        messages.forEach(({ message }) => message.ack());
      } catch (error) {
        retried += messages.length;
        log("warn", "intents_drain_failed", { error: String(error) });
        messages.forEach(({ message }) => message.retry());
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, users.length) }, worker));
  metrics.count("queue_messages_total", { queue, event: "consumed" }, requests.length - retried);
  metrics.count("queue_messages_total", { queue, event: "retried" }, retried);
  if (ctx) scheduleFlush(env, ctx);
}
