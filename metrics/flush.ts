import { log } from "../shared/log";
import type { FlushBatch } from "./protocol";
import { writeAnalytics } from "./analytics";
import { metrics } from "./recorder";
import { mergeInto } from "./accumulators";
import type { WaitUntil } from "../shared/wait-until";

/** An isolate sends its metrics at most this often (plus `/metrics` reads, which flush first). */
const FLUSH_INTERVAL_MS = 1_000;
/**
 * A flush never begins sooner than this after the call that asked for it.
 * Objects ask in the middle of their requests (a user's object as it answers
 * a like): a flush begun at once would send its batch, and the accumulator
 * commit it, beside the rest of that answer wherever objects share a
 * thread, as under `wrangler dev`.
 */
const FLUSH_AFTER_MS = 100;
/** A scheduled flush not done after this long was cut off with its request; another may be scheduled. */
const SCHEDULE_STALE_MS = 10_000;
/** Batches kept for resending while the accumulator cannot be reached; older ones are dropped (and logged). */
const MAX_UNSENT = 30;

let source: string | null = null;
let sequence = 0;
let unsent: FlushBatch[] = [];
let lastFlushAt = 0;
let scheduledAt: number | null = null;

/** This isolate's id; made on first use, since randomness is not available at global scope. */
function sourceId(): string {
  source ??= crypto.randomUUID();
  return source;
}

/**
 * Arranges for what this isolate recorded to reach its metrics accumulator,
 * off the request's path: FLUSH_AFTER_MS from now when the last flush is a
 * second old, else at the end of that second (the trailing flush, so an
 * isolate that goes quiet still reports). Call it after recording, with the
 * request's, the object's or the handler's context.
 */
export function scheduleFlush(env: Env, ctx: WaitUntil): void {
  const now = Date.now();
  if (metrics.idle && unsent.length === 0) return;
  if (scheduledAt !== null && now - scheduledAt < SCHEDULE_STALE_MS) return;
  scheduledAt = now;
  const wait = Math.max(FLUSH_AFTER_MS, lastFlushAt + FLUSH_INTERVAL_MS - now);
  ctx.waitUntil(
    new Promise((resolve) => setTimeout(resolve, wait)).then(() => {
      scheduledAt = null;
      return flushNow(env);
    }),
  );
}

/**
 * Sends everything recorded so far (and any batch a failed flush left) to the
 * isolate's accumulator. Each batch carries the isolate's id and a sequence number,
 * and the accumulator applies a batch once, so resending after an unclear failure
 * never counts twice. Never throws: metrics must not fail a request.
 */
export async function flushNow(env: Env): Promise<void> {
  lastFlushAt = Date.now();
  const series = metrics.take();
  if (series.length > 0) {
    unsent.push({ source: sourceId(), seq: ++sequence, series });
    writeAnalytics(env, series);
  }
  if (unsent.length > MAX_UNSENT) {
    const dropped = unsent.splice(0, unsent.length - MAX_UNSENT);
    log("error", "metrics_dropped", { batches: dropped.length });
  }
  if (unsent.length === 0) return;
  const sending = [...unsent];
  try {
    await mergeInto(env, sourceId(), sending);
    unsent = unsent.filter((batch) => !sending.includes(batch));
  } catch (error) {
    log("warn", "metrics_flush_failed", { error: String(error) });
  }
}
