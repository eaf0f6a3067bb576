import { scheduleFlush } from "../../metrics/flush";
import { metrics } from "../../metrics/recorder";
import { EMISSION_VERSION } from "../../shared/emissions";
import { log } from "../../shared/log";
import type { PassStep } from "../../shared/passes";
import { commitStep, finishIfDone, readRange, type Pass, type RangeRow } from "../stores/passes";
import { paceSeconds } from "./pass-pace";
import { stepWork } from "./pass-work";
import type { RequestMessage } from "./requests";

/**
 * The consumer's side of a pass: runs each message's step (the steps of one
 * batch side by side, one per range), commits it, and sends the range's next
 * step, or hands over to the range `concurrency` after it once this one is
 * done. A step that fails commits nothing and its message is retried after
 * a backoff, so a store that is down is not asked again at once.
 */
export async function answerPassSteps(env: Env, queue: string, steps: readonly RequestMessage<PassStep>[], ctx?: ExecutionContext): Promise<void> {
  const ran = await Promise.all(
    steps.map(async ({ message, request }) => {
      try {
        await runStep(env, request, message.attempts);
        message.ack();
        return true;
      } catch (error) {
        log("error", "pass_step_failed", { pass: request.pass, range: request.range, step: request.step, error: String(error) });
        message.retry({ delaySeconds: retryDelaySeconds(message.attempts) });
        return false;
      }
    }),
  );
  const retried = ran.filter((ok) => !ok).length;
  metrics.count("queue_messages_total", { queue, event: "consumed" }, steps.length - retried);
  metrics.count("queue_messages_total", { queue, event: "retried" }, retried);
  if (ctx) scheduleFlush(env, ctx);
}

/** Seconds before a failed step's next delivery: 2, 4, 8, ... up to a minute. */
export function retryDelaySeconds(attempts: number): number {
  return Math.min(60, 2 ** Math.max(1, attempts));
}

async function runStep(env: Env, request: PassStep, attempts: number): Promise<void> {
  const row = await readRange(env, request.pass, request.range);
  if (!row) return;
  // A step committed already, and its committer sent its successor. Were it
  // to send it again, each duplicate would start a second chain of steps for
  // the range; a runner that stopped between its commit and its send leaves
  // the range still, and the cron resends its step (resumeStalled).
  const dropped = () => metrics.count("pass_steps_dropped_total", { pass: row.plan.kind });
  if (row.done === 1 || request.step !== row.step) return dropped();
  const started = Date.now();
  const work = await stepWork(env, row.plan, row, attempts);
  const now = Date.now();
  // Another delivery of the same step committed first: this one's work is dropped with it.
  if (!(await commitStep(env, row, work, now))) return dropped();
  metrics.count("pass_items_total", { pass: row.plan.kind, range: String(row.range_no) }, work.visited);
  // Counted once committed, so a duplicate or a killed step is not counted twice.
  if (row.plan.kind === "reconcile") metrics.count("reconciliation_items_checked_total", {}, work.visited - work.skipped);
  const after: RangeRow = { ...row, cursor: work.cursor, step: row.step + 1, done: work.done ? 1 : 0 };
  if (work.done) {
    const ranges = await finishIfDone(env, row.pass, now);
    metrics.gauge("pass_ranges_done", { pass: row.plan.kind }, ranges.done);
    metrics.gauge("pass_ranges", { pass: row.plan.kind }, ranges.total);
    if (ranges.finished) log("info", "pass_finished", { pass: row.pass, seconds: (now - row.plan.started_at) / 1_000 });
  }
  await sendNext(env, row.plan, after, paceSeconds(env, row.plan, work, (now - started) / 1_000));
}

/** The message that carries a range on: its next step, or the first of the range it hands over to. */
export async function sendNext(env: Env, plan: Pass, row: RangeRow, delaySeconds: number): Promise<void> {
  const next = row.done === 1 ? row.range_no + plan.concurrency : row.range_no;
  if (next >= plan.ranges) return;
  await sendStep(env, { v: EMISSION_VERSION, kind: "pass_step", pass: plan.id, range: next, step: row.done === 1 ? 0 : row.step }, delaySeconds);
}

/**
 * A delay under a second is waited here (the queue's delays are whole
 * seconds); a longer one is the queue's, so no invocation waits long.
 */
export async function sendStep(env: Env, step: PassStep, delaySeconds: number): Promise<void> {
  if (delaySeconds > 0 && delaySeconds < 1) await new Promise((resolve) => setTimeout(resolve, delaySeconds * 1_000));
  await env.EVENTS.send(step, { contentType: "json", ...(delaySeconds >= 1 ? { delaySeconds: Math.round(delaySeconds) } : {}) });
  metrics.count("queue_messages_total", { queue: "plaudit-events", event: "sent" });
}
