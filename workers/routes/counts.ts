import { Hono } from "hono";
import { COUNTER_TYPES, itemKey, type Counts, type CounterType } from "../../shared/counters";
import { CountQuery, CountsRequest } from "../../shared/schemas";
import { unavailable } from "../lib/errors";
import { readCounts } from "../lib/count-reader";
import { readJson, readQuery } from "../lib/validation";
import type { AppEnv } from "../types";

export const counts = new Hono<AppEnv>();

/** One item's four counters. An item nobody touched has all counts 0. */
counts.get("/v1/count", async (c) => {
  const { item_id, item_type } = readQuery(c, CountQuery);
  const read = await readCounts(c.env, itemKey(item_type, item_id)).catch(() => {
    throw unavailable("The item's counts cannot be read right now.");
  });
  return c.json({
    item_id,
    item_type,
    counts: read.counts,
    cached: read.cached,
    as_of: new Date(read.asOf).toISOString(),
  });
});

function pick(all: Counts, types: readonly CounterType[]): Partial<Counts> {
  return Object.fromEntries(types.map((t) => [t, all[t]]));
}

/** Up to 100 items at once, read in parallel with one object call per distinct item. */
counts.post("/v1/counts", async (c) => {
  const started = Date.now();
  const { items, counter_types } = await readJson(c, CountsRequest);
  const types = counter_types ? [...new Set(counter_types)] : COUNTER_TYPES;
  const keys = [...new Set(items.map((i) => itemKey(i.item_type, i.item_id)))];
  const reads = await Promise.allSettled(keys.map((key) => readCounts(c.env, key)));
  const result: Record<string, Partial<Counts> | null> = {};
  let failed = 0;
  reads.forEach((read, i) => {
    if (read.status === "fulfilled") {
      result[keys[i]!] = pick(read.value.counts, types);
    } else {
      result[keys[i]!] = null;
      failed++;
    }
  });
  if (failed === keys.length) throw unavailable("None of the items' counts can be read right now.");
  return c.json({ counts: result, took_ms: Date.now() - started, ...(failed > 0 ? { partial: true } : {}) });
});
