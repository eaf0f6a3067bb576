import { app } from "./app";
import { aggregate } from "./pipeline/aggregator";
import { consumeDeadLetters } from "./pipeline/dead-letters";
import { RecheckRequest, ReconcileSlice } from "../shared/emissions";
import { DrainIntentsRequest } from "../shared/intents";
import { PassStep } from "../shared/passes";
import { ForgetUserRequest } from "../shared/removal";
import { answerDrains } from "./pipeline/drain-intents";
import { answerForgets } from "./pipeline/forget-user";
import { answerPassSteps } from "./pipeline/pass-steps";
import { answerRechecks } from "./pipeline/recheck";
import { answerSlices } from "./pipeline/reconcile-slices";
import { takeRequests } from "./pipeline/requests";
import { scheduled } from "./scheduled";

export { ItemCounter } from "../durable-objects/ItemCounter";
export { ItemShard } from "../durable-objects/ItemShard";
export { LiveHub } from "../durable-objects/LiveHub";
export { MetricsAccumulator } from "../durable-objects/MetricsAccumulator";
export { UserLikes } from "../durable-objects/UserLikes";

export default {
  fetch: app.fetch,
  /**
   * Every queue of the events pipeline has this Worker as its consumer;
   * dead-letter queues end in "-dlq". An events queue carries emissions, the
   * heads' and the reconciler's recheck requests, reconciliation's slices
   * (its random sample, the items around drift), the deleted users' wipe
   * requests, the drains of pending intents and the steps of passes over
 * every item (reconciliation's, rebuilds): rechecks run after the
   * batch's writes, so they compare the stores with what this batch brought.
   */
  async queue(batch, env, ctx) {
    if (batch.queue.endsWith("-dlq")) return await consumeDeadLetters(batch, env, ctx);
    const { requests: drains, others: remaining } = takeRequests(batch, DrainIntentsRequest);
    const { requests: forgets, others: rest } = takeRequests(remaining, ForgetUserRequest);
    const { requests: steps, others: unstepped } = takeRequests(rest, PassStep);
    const { requests: slices, others: unsliced } = takeRequests(unstepped, ReconcileSlice);
    const { requests: rechecks, others } = takeRequests(unsliced, RecheckRequest);
    if (others.messages.length > 0) await aggregate(others, env, ctx);
    if (rechecks.length > 0) await answerRechecks(env, batch.queue, rechecks, ctx);
    if (slices.length > 0) await answerSlices(env, batch.queue, slices, ctx);
    if (steps.length > 0) await answerPassSteps(env, batch.queue, steps, ctx);
    if (forgets.length > 0) await answerForgets(env, batch.queue, forgets, ctx);
    if (drains.length > 0) await answerDrains(env, batch.queue, drains, ctx);
  },
  scheduled,
} satisfies ExportedHandler<Env>;
