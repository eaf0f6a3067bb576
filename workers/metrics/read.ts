import { unavailable } from "../lib/errors";
import { flushNow } from "../../metrics/flush";
import type { MetricsRead } from "../../metrics/protocol";
import { readAllAccumulators } from "../../metrics/accumulators";

/** All isolates' metrics as of now: this isolate's own are flushed first, so a reader sees its own requests. */
export async function currentMetrics(env: Env): Promise<MetricsRead> {
  await flushNow(env);
  try {
    return await readAllAccumulators(env);
  } catch {
    throw unavailable("The metrics cannot be read right now.");
  }
}
