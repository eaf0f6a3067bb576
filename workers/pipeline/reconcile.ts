import { config } from "../../shared/config";
import { log } from "../../shared/log";
import { COUNTER_TYPES, type Counts } from "../../shared/counters";
import { withRetries } from "../../shared/retries";
import { recordRun, type RunCounts } from "../stores/reconciliation";
import { itemCounter } from "../lib/objects";
import { centralStore } from "../stores/central-tables";
import { readD1Rows, recentItems } from "../stores/item-counts";
import { settleAll } from "../../shared/settle";
import { followUpDrift } from "./reconcile-follow-ups";

/** Items whose D1 counts changed within this window are checked. */
const WINDOW_MS = 15 * 60_000;
const CONCURRENCY = 8;

/** `unrecorded`: the object holds views or shares its next commit puts under a new sequence. */
type ObjectState = { seq: number; ackedSeq: number; counts: Counts; unrecorded?: boolean };
type Stored = { seq: number; counts: Counts } | null;

/**
 * "ok": the store holds the object's current snapshot. "lag": the store is
 * behind but has not lost anything acknowledged (an emission is on its way).
 * "drift": the store disagrees with a snapshot it should hold.
 */
export type Verdict = { kind: "ok" } | { kind: "lag" } | { kind: "drift"; difference: number; relative: number };

export function compare(object: ObjectState, stored: Stored): Verdict {
  const seq = stored?.seq ?? 0;
  const gaps = COUNTER_TYPES.map((c) => ({ gap: Math.abs(object.counts[c] - (stored?.counts[c] ?? 0)), truth: object.counts[c] }));
  const difference = Math.max(...gaps.map(({ gap }) => gap));
  // Drift as |count - truth| / truth; a count that should be 0 and is not counts its whole gap.
  const relative = Math.max(...gaps.map(({ gap, truth }) => gap / Math.max(truth, 1)));
  if (seq === object.seq) {
    if (difference === 0) return { kind: "ok" };
    // Views counted in memory, whose snapshot is a commit away: on their way, and that snapshot overwrites this one.
    return object.unrecorded ? { kind: "lag" } : { kind: "drift", difference, relative };
  }
  // Below what the store acknowledged, or ahead of the object: the store lost or invented a snapshot.
  if (seq < object.ackedSeq || seq > object.seq) return { kind: "drift", difference, relative };
  return { kind: "lag" };
}

type Drift = Extract<Verdict, { kind: "drift" }>;

/** One item's check: each store's verdict, and the drifts that made it ask its object for a fresh snapshot. */
export type ItemCheck = { d1: Verdict; central: Verdict; drifted: Drift[] };

export type CheckOutcome = "ok" | "lag" | "repaired";

export function outcomeOf(check: ItemCheck): CheckOutcome {
  if (check.drifted.length > 0) return "repaired";
  return check.d1.kind === "lag" || check.central.kind === "lag" ? "lag" : "ok";
}

/**
 * Compares each item's D1 and central-store counts with its object, and asks
 * every drifted item's object for a fresh snapshot (a new sequence number, so
 * the stores take it over the wrong value). One result per item, in order; a
 * check that failed is a rejected one. The cron's run, the passes, the slices
 * and the hot items' rechecks (./recheck.ts) all check through here; `caller`
 * labels their object calls. The stores are read first, for all the items at
 * once (one D1 query per count database they fall in, one central-store
 * BatchGetItem per 100 items): a row read before its object can only be as
 * new as the object, never ahead of it.
 */
export async function checkItems(env: Env, items: readonly string[], caller: string): Promise<PromiseSettledResult<ItemCheck>[]> {
  const central = await centralStore(env).catch((error: unknown) => {
    log("error", "reconcile_central_unavailable", { error: String(error) });
    return null;
  });
  const stored = await readD1Rows(env, items, "reconcile", config(env).D1_TIMEOUT_MS);
  const unreadable = new Set(stored.failed);
  // A central store that cannot be read fails each item's check, as D1 does.
  const inCentralStore = central && items.length > 0 ? await central.readManyCounts(items).catch((error: unknown) => new Error(String(error))) : null;
  return await settleAll(items, CONCURRENCY, async (item) => {
    if (unreadable.has(item)) throw new Error(`the count database of ${item} cannot be read`);
    const stub = itemCounter(env, item, caller);
    const object = await withRetries(() => stub.emissionState());
    const row = stored.found.get(item);
    const d1 = compare(object, row ? { seq: row.seq, counts: row.counts } : null);
    if (inCentralStore instanceof Error) throw inCentralStore;
    const inCentral = inCentralStore ? compare(object, inCentralStore.get(item) ?? null) : ({ kind: "ok" } as Verdict);
    const drifted = [d1, inCentral].filter((v): v is Drift => v.kind === "drift");
    if (drifted.length > 0) await withRetries(() => stub.resnapshot());
    return { d1, central: inCentral, drifted };
  });
}

export type RunSummary = RunCounts & {
  /** The largest |count - truth| / truth among the drifted items. */
  maxRelativeDrift: number;
  /** Items found stored within the run's window, as many as it checks and at least one: 0 only when none was (an idle system). */
  itemsRecent: number;
};

/**
 * Compares the items updated recently in every D1 count database and the
 * central store with their objects, repairs the drifted ones (`checkItems`),
 * then queues a recheck of each and a sample of the items around it
 * (`followUpDrift`). Items quiet for years, or whose count row was lost, are
 * reached by the pass over every item (./pass-tick.ts). Safe to run twice at once: a repair is only an extra
 * snapshot, which the stores apply idempotently. Each run is recorded in
 * `reconciliation_runs` (in `DB`).
 */
export async function reconcile(env: Env, now = Date.now()): Promise<RunSummary> {
  const settings = config(env);
  // At least one is looked for: a run set to check none still tells whether anything was stored (the sample's condition).
  const recent = await recentItems(env, now - WINDOW_MS, Math.max(1, settings.RECONCILE_RECENT_ITEMS));
  const items = recent.slice(0, settings.RECONCILE_RECENT_ITEMS);
  const summary: RunSummary = {
    itemsChecked: 0,
    itemsRepaired: 0,
    itemsLagging: 0,
    d1Drift: 0,
    centralDrift: 0,
    maxDifference: 0,
    maxRelativeDrift: 0,
    itemsRecent: recent.length,
  };

  const drifted: string[] = [];
  for (const [i, result] of (await checkItems(env, items, "reconcile")).entries()) {
    if (result.status === "rejected") {
      log("error", "reconcile_item_failed", { error: String(result.reason) });
      continue;
    }
    const check = result.value;
    summary.itemsChecked++;
    if (check.d1.kind === "drift") summary.d1Drift++;
    if (check.central.kind === "drift") summary.centralDrift++;
    const outcome = outcomeOf(check);
    if (outcome === "repaired") {
      summary.itemsRepaired++;
      drifted.push(items[i]!);
    }
    if (outcome === "lag") summary.itemsLagging++;
    for (const { difference, relative } of check.drifted) {
      summary.maxDifference = Math.max(summary.maxDifference, difference);
      summary.maxRelativeDrift = Math.max(summary.maxRelativeDrift, relative);
    }
  }

  await recordRun(env, { ...summary, startedAt: now, finishedAt: Date.now() });
  log("info", "reconciliation", { ...summary });
  await followUpDrift(env, drifted).catch((error: unknown) => log("error", "reconcile_follow_up_failed", { error: String(error) }));
  return summary;
}
