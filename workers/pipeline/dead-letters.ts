import { log } from "../../shared/log";
import { Emission, RecheckRequest } from "../../shared/emissions";
import { ForgetUserRequest } from "../../shared/removal";
import { scheduleFlush } from "../../metrics/flush";
import { metrics } from "../../metrics/recorder";

/**
 * The dead-letter queue's consumer. A message lands here after max_retries
 * failed deliveries; nothing it carries is lost, because its source object
 * keeps every emission until the aggregator acknowledges it and resends it
 * on its own alarm (and a head asks for a lost recheck again an interval
 * later, a deleted user's object for a lost wipe). So each message is counted (the `dead_letters` alert), logged with
 * its origin so an operator can find the cause, and acknowledged on its own:
 * one bad message never holds the others back.
 */
export async function consumeDeadLetters(batch: MessageBatch<unknown>, env: Env, ctx?: ExecutionContext): Promise<void> {
  for (const message of batch.messages) {
    const parsed = Emission.safeParse(message.body);
    const recheck = parsed.success ? null : RecheckRequest.safeParse(message.body);
    // The request names no one in the log: its user is being deleted.
    const forget = ForgetUserRequest.safeParse(message.body).success;
    log("warn", "emission_dead_lettered", {
      id: message.id,
      attempts: message.attempts,
      ...(parsed.success
        ? { origin: parsed.data.origin, item: parsed.data.item, edges: parsed.data.edges.length, snapshot: parsed.data.snapshot?.seq ?? null }
        : recheck?.success
          ? { recheck: recheck.data.item }
          : forget
            ? { forget_user: true }
            : { malformed: parsed.error.issues[0]?.message ?? "not an emission" }),
    });
    message.ack();
  }
  metrics.count("queue_messages_total", { queue: batch.queue, event: "dead_lettered" }, batch.messages.length);
  if (ctx) scheduleFlush(env, ctx);
}
