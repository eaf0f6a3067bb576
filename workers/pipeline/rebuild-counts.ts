import { config } from "../../shared/config";
import { COUNTER_TYPES, type Counts } from "../../shared/counters";
import type { CountSnapshot } from "../../shared/emissions";
import type { RebuildResponse } from "../../shared/rebuild";
import { withRetries } from "../../shared/retries";
import { countLayout, groupByIndexes } from "../stores/count-layout";
import { writeIndexes } from "../../shared/count-layout";
import { itemCounter } from "../lib/objects";
import type { CentralStore } from "../stores/central-store";
import { readD1Rows, writeSnapshots } from "../stores/item-counts";
import { settleAll } from "../../shared/settle";

export const REBUILD_CALLER = "rebuild";
/** Objects asked, and central-store calls made, at once. */
export const REBUILD_CONCURRENCY = 8;

/** What a step tallies: the answer's counts, without where the walk stands. */
export type Tally = Omit<RebuildResponse, "target" | "next" | "progress">;

export const emptyTally = (): Tally => ({ checked: 0, written: 0, unchanged: 0, repaired: 0, edges_written: 0, edges_unchanged: 0, failed: [] });

type Stored = { seq: number; counts: Counts } | null | undefined;

/**
 * What a rebuild does with one item, given its object's snapshot and the
 * store's row: nothing when they agree; a write when the store has no row or
 * an older one (the store's sequence check keeps a newer row the pipeline
 * wrote meanwhile); and when the store holds another count at the same or a
 * later sequence, a fresh snapshot from the object, under a new sequence
 * (reconciliation's repair), since no write at the old one would be taken.
 */
export function plan(object: CountSnapshot, stored: Stored): "unchanged" | "write" | "repair" {
  if (object.seq === 0) return "unchanged";
  if (!stored || stored.seq < object.seq) return "write";
  const same = stored.seq === object.seq && COUNTER_TYPES.every((c) => stored.counts[c] === object.counts[c]);
  return same ? "unchanged" : "repair";
}

/**
 * Copies the counts of `items` from their objects into D1 (`central` null)
 * or the central store, and tallies what it changed. An item that fails is
 * listed, not retried here: the rebuild is idempotent, run it again.
 */
export async function rebuildItemCounts(env: Env, items: readonly string[], central: CentralStore | null, tally: Tally): Promise<void> {
  const fail = (key: string, error: unknown) => tally.failed.push({ key, error: String(error) });
  const objects = new Map<string, CountSnapshot>();
  (await settleAll(items, REBUILD_CONCURRENCY, (item) => withRetries(() => itemCounter(env, item, REBUILD_CALLER).emissionState()))).forEach(
    (result, i) => {
      if (result.status === "fulfilled") objects.set(items[i]!, { seq: result.value.seq, counts: result.value.counts });
      else fail(items[i]!, result.reason);
    },
  );

  const stored = new Map<string, Stored>();
  const present = [...objects.keys()];
  const unreadable = (item: string, error: unknown) => {
    objects.delete(item);
    fail(item, error);
  };
  if (central) {
    (await settleAll(present, REBUILD_CONCURRENCY, (item) => central.readCounts(item))).forEach((result, i) => {
      if (result.status === "fulfilled") stored.set(present[i]!, result.value);
      else unreadable(present[i]!, result.reason);
    });
  } else {
    // D1 itself, never the central store in its place: a row D1 lost but the central store holds must be rewritten.
    const read = await readD1Rows(env, present, REBUILD_CALLER, config(env).D1_TIMEOUT_MS);
    for (const item of read.failed) unreadable(item, "its count database cannot be read");
    for (const item of objects.keys()) stored.set(item, read.found.get(item) ?? null);
  }

  const writes = new Map<string, CountSnapshot>();
  const repairs: string[] = [];
  for (const [item, object] of objects) {
    tally.checked++;
    const action = plan(object, stored.get(item));
    if (action === "unchanged") tally.unchanged++;
    else if (action === "write") writes.set(item, object);
    else repairs.push(item);
  }

  if (central) {
    const entries = [...writes];
    (await settleAll(entries, REBUILD_CONCURRENCY, ([item, snapshot]) => central.writeSnapshot(item, snapshot))).forEach((result, i) => {
      if (result.status === "rejected") fail(entries[i]![0], result.reason);
      else if (result.value === "written") tally.written++;
      else tally.unchanged++;
    });
  } else {
    const layout = await countLayout(env);
    await Promise.all(
      [...groupByIndexes(env, [...writes], ([item]) => writeIndexes(layout, item))].map(async ([db, group]) => {
        try {
          const changed = await writeSnapshots(env, db, new Map(group), { items: [] }, Date.now(), REBUILD_CALLER);
          tally.written += changed;
          tally.unchanged += group.length - changed;
        } catch (error) {
          for (const [item] of group) fail(item, error);
        }
      }),
    );
  }

  (await settleAll(repairs, REBUILD_CONCURRENCY, (item) => withRetries(() => itemCounter(env, item, REBUILD_CALLER).resnapshot()))).forEach(
    (result, i) => {
      if (result.status === "fulfilled") tally.repaired++;
      else fail(repairs[i]!, result.reason);
    },
  );
}
