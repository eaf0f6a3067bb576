import { metrics } from "../../metrics/recorder";
import { config } from "../../shared/config";
import { EMISSION_VERSION } from "../../shared/emissions";
import { log } from "../../shared/log";
import type { PassKind } from "../../shared/passes";
import { estimateIndexSize } from "../stores/index-walk";
import { recentItems } from "../stores/item-counts";
import { createPass, finishIfDone, latestPass, PASS_CALLER, rangesOf, unfinishedPasses, type Pass, type PassPlan } from "../stores/passes";
import { sendStep } from "./pass-steps";

/** A range whose step has not committed for this long (and at least three of its paced intervals) has lost its message. */
const MIN_LEASE_MS = 10 * 60_000;

/**
 * Starts a pass: its rows, then the first step of each of its first
 * `concurrency` ranges. Answers null, and sends nothing, when a pass of its
 * kind is running already.
 */
export async function startPass(env: Env, plan: PassPlan, now = Date.now()): Promise<Pass | null> {
  const pass = await createPass(env, plan, now);
  if (!pass) {
    log("info", "pass_already_running", { kind: plan.kind });
    return null;
  }
  for (let range = 0; range < pass.concurrency; range++) await sendStep(env, { v: EMISSION_VERSION, kind: "pass_step", pass: pass.id, range, step: 0 }, 0);
  log("info", "pass_started", { pass: pass.id, ranges: pass.ranges, concurrency: pass.concurrency, items_per_second: pass.items_per_second });
  return pass;
}

/** The settings a pass of this kind runs with; a reconciliation pass is paced by the cron (`tickPasses`). */
export function passPlan(env: Env, kind: PassKind, itemsPerSecond = 0): PassPlan {
  const settings = config(env);
  return { kind, ranges: settings.PASS_RANGES, concurrency: settings.PASS_CONCURRENCY, stepItems: settings.PASS_STEP_ITEMS, itemsPerSecond };
}

/**
 * The cron's part (every 5 minutes): starts the next reconciliation pass once
 * the last one is done, RECONCILE_FULL_PASS_HOURS have passed since it
 * began and some item's counts were stored since then (an idle system does
 * no work), paced so that it ends in that time (items a second = the index's
 * size / the pass's seconds; each 5-minute tick's budget is 300 times that);
 * resends the step of any range of an unfinished pass that stopped moving (a
 * message lost or dead-lettered), finishes a pass whose ranges are all done
 * (its last step's runner may have stopped before it did); and reports every unfinished pass's ranges.
 * An empty index starts nothing, so an idle system with nothing counted sends nothing.
 */
export async function tickPasses(env: Env, now = Date.now()): Promise<void> {
  const passSeconds = config(env).RECONCILE_FULL_PASS_HOURS * 3_600;
  const latest = await latestPass(env, "reconcile");
  if (latest?.finished_at != null) metrics.gauge("reconciliation_oldest_check_seconds", {}, (now - latest.started_at) / 1_000);
  const due = !latest || (latest.finished_at !== null && now - latest.started_at >= passSeconds * 1_000);
  if (due && (!latest || (await recentItems(env, latest.started_at, 1)).length > 0)) {
    const items = await estimateIndexSize(env, PASS_CALLER);
    const pass = items > 0 ? await startPass(env, passPlan(env, "reconcile", items / passSeconds), now) : null;
    if (pass) metrics.gauge("pass_target_items_per_second", { pass: "reconcile" }, pass.items_per_second);
  }
  for (const pass of await unfinishedPasses(env)) await resumeStalled(env, pass, now);
}

/**
 * Resends the current step of each range in flight that has not committed
 * one within its lease: a duplicate of a message still on its way commits
 * nothing, so resending is safe. A pass whose ranges are all done is marked
 * finished (idempotent), so a runner that stopped before it did leaves no
 * pass unfinished for good.
 */
export async function resumeStalled(env: Env, pass: Pass, now: number, leaseMs = lease(pass)): Promise<number> {
  const ranges = await rangesOf(env, pass.id);
  let resent = 0;
  for (const row of ranges) {
    const before = ranges[row.range_no - pass.concurrency];
    // In flight: not done, and the first of its chain or handed over to by a range that is done.
    if (row.done === 1 || (before && before.done === 0)) continue;
    if (Math.max(row.touched_at, before?.touched_at ?? 0) > now - leaseMs) continue;
    await sendStep(env, { v: EMISSION_VERSION, kind: "pass_step", pass: pass.id, range: row.range_no, step: row.step }, 0);
    resent++;
  }
  const done = ranges.filter((row) => row.done === 1).length;
  if (done === ranges.length && (await finishIfDone(env, pass.id, now)).finished) log("info", "pass_finished", { pass: pass.id, seconds: (now - pass.started_at) / 1_000 });
  metrics.gauge("pass_ranges_done", { pass: pass.kind }, done);
  metrics.gauge("pass_ranges", { pass: pass.kind }, ranges.length);
  if (resent > 0) log("warn", "pass_ranges_resumed", { pass: pass.id, ranges: resent });
  return resent;
}

function lease(pass: Pass): number {
  const stepSeconds = pass.items_per_second > 0 ? (pass.step_items * pass.concurrency) / pass.items_per_second : 0;
  return Math.max(MIN_LEASE_MS, 3 * stepSeconds * 1_000);
}
