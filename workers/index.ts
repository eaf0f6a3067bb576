import { app } from "./app";
import { aggregate } from "./pipeline/aggregator";
import { consumeDeadLetters } from "./pipeline/dead-letters";
import { RecheckRequest, ReconcileSlice } from "../shared/emissions";
import { ForgetUserRequest } from "../shared/removal";
import { answerForgets } from "./pipeline/forget-user";
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
   * (its random sample, the items around drift) and the deleted users' wipe requests: rechecks
   * run after the batch's writes, so they compare the stores with what this
   * batch brought.
   */
  async queue(batch, env, ctx) {
    if (batch.queue.endsWith("-dlq")) return await consumeDeadLetters(batch, env, ctx);
    const { requests: forgets, others: rest } = takeRequests(batch, ForgetUserRequest);
    const { requests: slices, others: remaining } = takeRequests(rest, ReconcileSlice);
    const { requests: rechecks, others } = takeRequests(remaining, RecheckRequest);
    if (others.messages.length > 0) await aggregate(others, env, ctx);
    if (rechecks.length > 0) await answerRechecks(env, batch.queue, rechecks, ctx);
    if (slices.length > 0) await answerSlices(env, batch.queue, slices, ctx);
    if (forgets.length > 0) await answerForgets(env, batch.queue, forgets, ctx);
  },
  scheduled,
} satisfies ExportedHandler<Env>;
