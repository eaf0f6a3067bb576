// The front over the pipeline's shape: plaudit's own Worker, as the front
// reference runs it (bench/reference/front.ts), over the pipeline
// reference's objects and queue consumer (bench/reference/pipeline.ts):
// a user's object that answers after one commit and delivers the change
// after its answer, an item that applies it and sends its count from a
// timer, a consumer that writes D1, each done as simply as it can be.
// So it is plaudit's design with plaudit's front and nothing beyond the
// simplest form of each part: its distance from the like reference is the
// floor of that design here, and plaudit's distance from it is what
// plaudit's objects and pipeline do beyond their simplest form (history,
// hot-item splits, the central store's feed, metrics in the objects, the
// commit window, backoffs). Likes only: the users' object keys an edge by
// its item alone, so a save here is a like of the same item.
import plaudit from "../../workers/index";
import pipeline, { type Emission, type PipelineEnv } from "./pipeline";

// front-pipeline.toml binds the users' object (USER_LIKES), the items and plaudit's other classes, from the Worker's own module.
export { ConvergingUser, PipelineItem } from "./pipeline";
export { ItemCounter, ItemShard, LiveHub, MetricsAccumulator } from "../../workers/index";

/** The pipeline's emissions queue, as front-pipeline.toml names it; every other queue is plaudit's. */
const EMISSIONS_QUEUE = "plaudit-reference-front-pipeline";

type FrontPipelineEnv = Env & PipelineEnv;

export default {
  fetch(request, env, ctx) {
    // The pipeline's /healthz counts its objects' alarms: the bench waits on it as on the pipeline reference's.
    if (request.url.endsWith("/healthz")) return pipeline.fetch(request, env);
    return plaudit.fetch(request, env, ctx);
  },
  async queue(batch, env, ctx) {
    if (batch.queue === EMISSIONS_QUEUE) return await pipeline.queue(batch as MessageBatch<Emission>, env);
    await plaudit.queue(batch, env, ctx);
  },
} satisfies ExportedHandler<FrontPipelineEnv>;
