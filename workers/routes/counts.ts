import { Hono } from "hono";
import { COUNTER_TYPES, itemKey, type CounterType } from "../../shared/counters";
import { disclosure, shownCounts, type ShownCounts } from "../../shared/privacy";
import { CountQuery, CountsRequest } from "../../shared/schemas";
import { readCounts } from "../lib/count-reader";
import { unavailable } from "../lib/errors";
import { readJson, readQuery } from "../lib/validation";
import { optionalUser } from "../middleware/auth";
import { readLimit } from "../middleware/read-limit";
import { identifyViewer } from "../middleware/viewer";
import { readSettings } from "../privacy/item-settings";
import type { AppEnv } from "../types";

export const counts = new Hono<AppEnv>();

/** Marks an answer served from the last known value because the item's object failed. */
const STALE_HEADER = "x-stale-data";

/**
 * One item's four counters, as the viewer may read them. An item nobody
 * touched has all counts 0, and so has an item the viewer may not see, as of
 * now (its real time would hint that someone touched it).
 */
counts.get("/v1/count", readLimit, optionalUser, identifyViewer, async (c) => {
  const { item_id, item_type } = readQuery(c, CountQuery);
  const key = itemKey(item_type, item_id);
  const [read, settings] = await Promise.all([
    readCounts({ env: c.env, ctx: c.executionCtx }, key).catch(() => {
      throw unavailable("The item's counts cannot be read right now.");
    }),
    readSettings(c.env, [key]),
  ]);
  if (read.stale) c.header(STALE_HEADER, "true");
  const shown = disclosure(settings.get(key)!, c.get("viewer"));
  return c.json({
    item_id,
    item_type,
    counts: shownCounts(read.counts, shown),
    cached: read.cached,
    as_of: new Date(shown === "untouched" ? Date.now() : read.asOf).toISOString(),
  });
});

function pick(all: ShownCounts, types: readonly CounterType[]): Partial<ShownCounts> {
  return Object.fromEntries(types.map((t) => [t, all[t]]));
}

/** Up to 100 items at once, read in parallel with one object call per distinct item. */
counts.post("/v1/counts", readLimit, optionalUser, identifyViewer, async (c) => {
  const started = Date.now();
  const { items, counter_types } = await readJson(c, CountsRequest);
  const types = counter_types ? [...new Set(counter_types)] : COUNTER_TYPES;
  const keys = [...new Set(items.map((i) => itemKey(i.item_type, i.item_id)))];
  const rt = { env: c.env, ctx: c.executionCtx };
  const [reads, settings] = await Promise.all([Promise.allSettled(keys.map((key) => readCounts(rt, key))), readSettings(c.env, keys)]);
  const viewer = c.get("viewer");
  const result: Record<string, Partial<ShownCounts> | null> = {};
  let failed = 0;
  let stale = false;
  reads.forEach((read, i) => {
    if (read.status === "fulfilled") {
      result[keys[i]!] = pick(shownCounts(read.value.counts, disclosure(settings.get(keys[i]!)!, viewer)), types);
      stale ||= read.value.stale;
    } else {
      result[keys[i]!] = null;
      failed++;
    }
  });
  if (failed === keys.length) throw unavailable("None of the items' counts can be read right now.");
  if (stale) c.header(STALE_HEADER, "true");
  return c.json({ counts: result, took_ms: Date.now() - started, ...(failed > 0 ? { partial: true } : {}) });
});
