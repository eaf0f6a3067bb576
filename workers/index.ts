import { app } from "./app";
import { aggregate } from "./pipeline/aggregator";
import { scheduled } from "./scheduled";

export { ItemCounter } from "../durable-objects/ItemCounter";
export { ItemShard } from "../durable-objects/ItemShard";
export { LiveHub } from "../durable-objects/LiveHub";
export { MetricsShard } from "../durable-objects/MetricsShard";
export { UserLikes } from "../durable-objects/UserLikes";

export default {
  fetch: app.fetch,
  queue: aggregate,
  scheduled,
} satisfies ExportedHandler<Env>;
