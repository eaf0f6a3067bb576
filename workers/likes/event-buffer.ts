import { log } from "../../shared/log";
import type { EventBatch } from "../../shared/contracts";
import { config } from "../../shared/config";
import type { EventCounter } from "../../shared/counters";
import { withRetries } from "../../shared/retries";
import { ViewerBatch } from "../../shared/viewer-batch";
import { rememberCounts, type Runtime } from "../reads/count-reader";
import { itemCounter } from "../lib/objects";

type Pending = { counts: Record<EventCounter, number>; keyed: Map<string, EventCounter>; viewers: ViewerBatch };

/** Gives up re-sending a batch after this many failed flushes, so a dead item cannot pin memory. */
const MAX_FLUSH_ATTEMPTS = 5;

const pending = new Map<string, Pending & { attempts: number }>();
let flushScheduled = false;

/**
 * Views and shares are added up in the isolate and sent to each item about
 * once a second, so a viral item's views cost neither a durable write nor an
 * object call each. What an isolate holds when it dies is lost: at most about
 * a second of views and shares (likes and saves never take this trade-off).
 *
 * Returns false when an event with the same idempotency key is already waiting
 * here (the item side dedups keys across isolates and flushes).
 */
export function recordEvent(rt: Runtime, key: string, counter: EventCounter, idempotencyKey?: string, viewer?: string): boolean {
  let entry = pending.get(key);
  // A burst over many items is sent as it comes instead of gathered for a second: the buffer never holds more than its bound.
  if (!entry && pending.size >= config(rt.env).EVENT_BUFFER_ITEMS) rt.ctx.waitUntil(flushEvents(rt));
  if (!entry) {
    entry = { counts: { views: 0, shares: 0 }, keyed: new Map(), viewers: new ViewerBatch(), attempts: 0 };
    pending.set(key, entry);
  }
  if (viewer !== undefined) entry.viewers.add(viewer);
  if (idempotencyKey !== undefined) {
    if (entry.keyed.has(idempotencyKey)) return false;
    entry.keyed.set(idempotencyKey, counter);
  } else {
    entry.counts[counter]++;
  }
  scheduleFlush(rt);
  return true;
}

function scheduleFlush(rt: Runtime): void {
  if (flushScheduled) return;
  flushScheduled = true;
  const delay = config(rt.env).EVENT_FLUSH_MS;
  rt.ctx.waitUntil(
    new Promise((resolve) => setTimeout(resolve, delay)).then(() => flushEvents(rt)),
  );
}

/** Sends everything gathered to the items; what fails goes back into the buffer for the next flush. */
export async function flushEvents(rt: Runtime): Promise<void> {
  flushScheduled = false;
  const batch = [...pending];
  pending.clear();
  await Promise.all(
    batch.map(async ([key, entry]) => {
      const events: EventBatch = {
        counts: entry.counts,
        keyed: [...entry.keyed].map(([k, counter]) => ({ counter, key: k })),
        viewers: entry.viewers.payload(),
      };
      try {
        const counts = await withRetries(async () => await itemCounter(rt.env, key, "event_buffer").addEvents(events));
        rememberCounts(rt, key, counts);
      } catch (error) {
        log("error", "event_flush_failed", { item: key, error: String(error) });
        if (entry.attempts + 1 < MAX_FLUSH_ATTEMPTS) requeue(rt, key, entry);
      }
    }),
  );
}

/** Items whose views and shares wait in this isolate for the next flush. */
export function bufferedItems(): number {
  return pending.size;
}

function requeue(rt: Runtime, key: string, failed: Pending & { attempts: number }): void {
  const current = pending.get(key);
  if (!current && pending.size >= config(rt.env).EVENT_BUFFER_ITEMS) {
    log("error", "event_batch_dropped", { item: key, views: failed.counts.views, shares: failed.counts.shares });
    return;
  }
  if (!current) {
    pending.set(key, { ...failed, attempts: failed.attempts + 1 });
  } else {
    current.counts.views += failed.counts.views;
    current.counts.shares += failed.counts.shares;
    for (const [k, counter] of failed.keyed) current.keyed.set(k, counter);
    current.viewers.absorb(failed.viewers);
    current.attempts = Math.max(current.attempts, failed.attempts + 1);
  }
  scheduleFlush(rt);
}
