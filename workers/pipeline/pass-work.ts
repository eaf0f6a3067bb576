import { metrics } from "../../metrics/recorder";
import { log } from "../../shared/log";
import { decodeCursor, encodeCursor, type RebuildCursor } from "../../shared/rebuild";
import { centralStore } from "../stores/central-tables";
import { indexPage } from "../stores/index-walk";
import { PASS_CALLER, type Pass, type RangeRow, type StepResult } from "../stores/passes";
import { rebuildStep } from "./rebuild";
import { checkItems, outcomeOf } from "./reconcile";
import { followUpDrift } from "./reconcile-follow-ups";

/** A step's result and what it asked of the stores (for the pace: ./pass-pace.ts). */
export type StepWork = StepResult & { d1Queries: number; centralKeys: number; skipped: number };

/**
 * Deliveries of one step after which an item whose check keeps failing (an
 * overloaded object) is skipped, counted and logged, rather than stalling its
 * range: the next pass and the random samples check it again. Below the
 * queue's max_retries (5), so the step commits before it is dead-lettered.
 */
export const SKIP_FAILING_AFTER_ATTEMPTS = 3;

/** Queries every step makes besides its work: the range's row read and its commit. */
const STATE_QUERIES = 2;

/**
 * One step of a range: the next `step_items` keys of the range after its
 * cursor, checked (reconciliation) or rebuilt. A key that fails fails the
 * whole step, which then commits nothing and is retried: every write in it
 * is idempotent, so its repetition changes nothing. From the
 * SKIP_FAILING_AFTER_ATTEMPTS-th delivery on, a reconciliation step skips
 * the items whose check fails.
 */
export async function stepWork(env: Env, plan: Pass, row: RangeRow, attempts = 1): Promise<StepWork> {
  const cursor = row.cursor === null ? null : decodeCursor(row.cursor);
  if (row.cursor !== null && cursor === null) throw new Error(`pass ${row.pass} range ${row.range_no} holds a cursor that does not parse`);
  return plan.kind === "reconcile" ? await reconcileStep(env, plan, row, cursor, attempts) : await rebuildRangeStep(env, plan, row, cursor);
}

async function reconcileStep(env: Env, plan: Pass, row: RangeRow, cursor: RebuildCursor | null, attempts: number): Promise<StepWork> {
  const after = cursor?.phase === "items" ? cursor : { draw: row.lo, key: "" };
  const page = await indexPage(env, "item_index", after, plan.step_items, PASS_CALLER, row);
  const items = page.entries.map(({ key }) => key);
  const drifted: string[] = [];
  const skipped: string[] = [];
  for (const [i, result] of (await checkItems(env, items, "reconcile")).entries()) {
    if (result.status === "fulfilled") {
      if (outcomeOf(result.value) === "repaired") drifted.push(items[i]!);
    } else if (attempts >= SKIP_FAILING_AFTER_ATTEMPTS) {
      skipped.push(items[i]!);
      log("warn", "pass_item_skipped", { pass: row.pass, range: row.range_no, item: items[i], attempts, error: String(result.reason) });
    } else {
      throw new Error(`reconciling ${items[i]}: ${String(result.reason)}`);
    }
  }
  await followUpDrift(env, drifted);
  metrics.count("pass_items_skipped_total", { pass: plan.kind }, skipped.length);
  const last = page.entries.at(-1);
  return {
    cursor: last ? encodeCursor({ phase: "items", ...last }) : row.cursor,
    visited: items.length,
    changed: drifted.length,
    done: page.done,
    skipped: skipped.length,
    // The index page, one read of the items' count rows; the central store's rows, a key each (a BatchGetItem per 100).
    d1Queries: STATE_QUERIES + 2,
    centralKeys: items.length,
  };
}

async function rebuildRangeStep(env: Env, plan: Pass, row: RangeRow, cursor: RebuildCursor | null): Promise<StepWork> {
  const target = plan.kind === "rebuild_d1" ? "d1" : "central";
  const central = target === "central" ? await centralStore(env) : null;
  if (target === "central" && !central) throw new Error("the central store is off (ALTERNATOR_ENDPOINT is empty)");
  const answer = await rebuildStep(env, target, cursor, plan.step_items, central, row);
  if (answer.failed.length > 0) throw new Error(`rebuilding ${answer.failed.length} keys failed, e.g. ${answer.failed[0]!.key}: ${answer.failed[0]!.error}`);
  const changed = answer.written + answer.repaired + answer.edges_written;
  const edges = answer.edges_written + answer.edges_unchanged;
  return {
    cursor: answer.next ?? row.cursor,
    visited: answer.checked,
    changed,
    done: answer.next === null,
    skipped: 0,
    // The index page (and for D1 the count rows' read, and a statement per row written).
    d1Queries: STATE_QUERIES + 1 + (target === "d1" ? 1 + answer.written : 0),
    // Central: a key read per item and a write where it was wrong; two writes per edge.
    centralKeys: target === "central" ? answer.checked + answer.written + 2 * edges : 0,
  };
}
