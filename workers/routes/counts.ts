import { Hono } from "hono";
import { COUNTER_TYPES, itemKey, type Counts, type CounterType } from "../../shared/counters";
import { CountQuery, CountsRequest } from "../../shared/schemas";
import { readCounts, readMany } from "../lib/count-reader";
import { addUniqueViewers } from "../lib/history-reader";
import { unavailable } from "../lib/errors";
import { readJson, readQuery } from "../lib/validation";
import { readLimit } from "../middleware/read-limit";
import type { AppEnv } from "../types";

export const counts = new Hono<AppEnv>();

/** Marks an answer served from the last known value because the regional store failed. */
const STALE_HEADER = "x-stale-data";

/** One item's four counters. An item nobody touched has all counts 0. */
counts.get("/v1/count", readLimit, async (c) => {
  const { item_id, item_type, unique_viewers } = readQuery(c, CountQuery);
  const key = itemKey(item_type, item_id);
  const read = await readCounts({ env: c.env, ctx: c.executionCtx }, key, "/v1/count").catch(() => {
    throw unavailable("The item's counts cannot be read right now.");
  });
  if (read.stale) c.header(STALE_HEADER, "true");
  const body: Partial<Counts> = { ...read.counts };
  if (unique_viewers) await addUniqueViewers(c.env, { [key]: body }, "/v1/count");
  return c.json({
    item_id,
    item_type,
    counts: body,
    cached: read.cached,
    as_of: new Date(read.asOf).toISOString(),
  });
});

function pick(all: Counts, types: readonly CounterType[]): Partial<Counts> {
  return Object.fromEntries(types.map((t) => [t, all[t]]));
}

/** Up to 100 items at once: what no cache holds comes from one query per D1 database, never from the objects. */
counts.post("/v1/counts", readLimit, async (c) => {
  const started = Date.now();
  const { items, counter_types, unique_viewers } = await readJson(c, CountsRequest);
  const types = counter_types ? [...new Set(counter_types)] : COUNTER_TYPES;
  const keys = [...new Set(items.map((i) => itemKey(i.item_type, i.item_id)))];
  const reads = await readMany({ env: c.env, ctx: c.executionCtx }, keys, "/v1/counts");
  const result: Record<string, Partial<Counts> | null> = {};
  let failed = 0;
  let stale = false;
  for (const key of keys) {
    const read = reads.get(key);
    result[key] = read ? pick(read.counts, types) : null;
    if (!read) failed++;
    stale ||= read?.stale === true;
  }
  if (failed === keys.length) throw unavailable("None of the items' counts can be read right now.");
  if (stale) c.header(STALE_HEADER, "true");
  if (unique_viewers) await addUniqueViewers(c.env, result, "/v1/counts");
  return c.json({ counts: result, took_ms: Date.now() - started, ...(failed > 0 ? { partial: true } : {}) });
});
