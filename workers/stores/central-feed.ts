import type { Counts } from "../../shared/counters";
import { withDeadline } from "../../shared/deadline";
import { UNKNOWN_ITEM, type ItemSettings } from "../../shared/privacy";
import { centralReader } from "./central-tables";

/** BatchGetItem takes at most 100 keys a request; a feed asks for at most 100 items. */
const BATCH_KEYS = 100;

/** What one read cost: requests to each store. */
export type Trips = { d1: number; central: number };

/** Where a feed read puts what it found (the shape of a D1 read's answer). */
type Into = {
  found: Map<string, { counts: Counts; seq: number; asOf: number; countedAt: number }>;
  settings: Map<string, ItemSettings>;
};

/**
 * Reads items' counts and settings from the central store in at most
 * `maxTrips` batch reads (the store may leave keys unprocessed for another
 * request); answers the items it could not read: all of them when the store
 * is off, fails or is slower than `timeoutMs`.
 */
export async function readCentralRows(env: Env, items: readonly string[], timeoutMs: number, into: Into, trips: Trips, maxTrips: number): Promise<string[]> {
  const store = centralReader(env);
  if (!store) return [...items];
  let left = [...items];
  try {
    while (left.length > 0 && trips.central < maxTrips) {
      trips.central++;
      const asked = left.slice(0, BATCH_KEYS);
      const { rows, unprocessed } = await withDeadline(store.readFeed(asked), timeoutMs, "central store feed read");
      const skipped = new Set(unprocessed);
      const now = Date.now();
      for (const item of asked) {
        if (skipped.has(item)) continue;
        const row = rows.get(item);
        // The central row keeps no write time: its counts are as of when the head took them.
        if (row?.counts) into.found.set(item, { ...row.counts, asOf: row.counts.countedAt || now });
        into.settings.set(item, row?.settings ?? UNKNOWN_ITEM);
      }
      left = [...unprocessed, ...left.slice(BATCH_KEYS)];
    }
  } catch {
    // The central store failed or was slow: the databases answer for what it did not.
  }
  return left;
}
