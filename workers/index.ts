import { app } from "./app";

export { ItemCounter } from "../durable-objects/ItemCounter";
export { ItemShard } from "../durable-objects/ItemShard";
export { MetricsShard } from "../durable-objects/MetricsShard";
export { UserLikes } from "../durable-objects/UserLikes";

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
