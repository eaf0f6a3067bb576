import { app } from "./app";
import { aggregate } from "./pipeline/aggregator";
import { consumeDeadLetters } from "./pipeline/dead-letters";
import { scheduled } from "./scheduled";

export { ItemCounter } from "../durable-objects/ItemCounter";
export { ItemShard } from "../durable-objects/ItemShard";
export { MetricsAccumulator } from "../durable-objects/MetricsAccumulator";
export { UserLikes } from "../durable-objects/UserLikes";

export default {
  fetch: app.fetch,
  /** Every queue of the events pipeline has this Worker as its consumer; dead-letter queues end in "-dlq". */
  async queue(batch, env, ctx) {
    if (batch.queue.endsWith("-dlq")) await consumeDeadLetters(batch, env, ctx);
    else await aggregate(batch, env, ctx);
  },
  scheduled,
} satisfies ExportedHandler<Env>;
