import { Hono, type Context } from "hono";
import { COUNTER_TYPES, itemKey, type Counts, type CounterType } from "../../shared/counters";
import { disclosure, shownCount, shownCounts, type Disclosure, type ShownCounts } from "../../shared/privacy";
import { CountQuery, CountsQuery, CountsRequest, type ItemRef } from "../../shared/schemas";
import { plainCountsRequest } from "../../shared/counts-request";
import { readCounts, readMany } from "../reads/count-reader";
import { addUniqueViewers } from "../reads/history-reader";
import { unavailable } from "../lib/errors";
import { notModified, setReadCaching, weakETag } from "../reads/http-cache";
import { readJson, readQuery } from "../lib/validation";
import { optionalUser } from "../middleware/auth";
import { readLimit } from "../middleware/read-limit";
import { identifyViewer } from "../middleware/viewer";
import { readSettings } from "../privacy/item-settings";
import type { AppEnv } from "../types";

export const counts = new Hono<AppEnv>();

/** Marks an answer served from the last known value because the regional store failed. */
const STALE_HEADER = "x-stale-data";

/**
 * One item's four counters, as the viewer may read them. An item nobody
 * touched has all counts 0, and so has an item the viewer may not see. For
 * it, and for counts hidden from the viewer, `as_of` is when the store was
 * read, as an untouched item's is (the item's own time would tell when it
 * last changed), and `cached` is what an untouched item would answer: false
 * on the first read to meet a value, also one a like left in the cache.
 */
counts.get("/v1/count", readLimit, optionalUser, identifyViewer, async (c) => {
  const { item_id, item_type, unique_viewers } = readQuery(c, CountQuery);
  const key = itemKey(item_type, item_id);
  const read = await readCounts({ env: c.env, ctx: c.executionCtx }, key, "/v1/count").catch(() => {
    throw unavailable("The item's counts cannot be read right now.");
  });
  // After the counts: a store read brought the settings along, so this is usually a cache hit.
  const settings = await readSettings(c.env, [key], "/v1/count");
  if (read.stale) c.header(STALE_HEADER, "true");
  const shown = disclosure(settings.get(key)!, c.get("viewer"));
  const body: Partial<ShownCounts> = shownCounts(read.counts, shown);
  if (unique_viewers) await addUniqueViewers(c.env, { [key]: body }, () => shown, "/v1/count");
  return c.json({
    item_id,
    item_type,
    counts: body,
    cached: shown === "counts" ? read.cached : read.cached && !read.firstRead,
    as_of: new Date(shown === "counts" ? read.asOf : read.readAt).toISOString(),
  });
});

/** The asked counters of one item as the viewer may read them, built directly: a feed builds 50 to 100 of these. */
function pick(counts: Counts, shown: Disclosure, types: readonly CounterType[]): Partial<ShownCounts> {
  const picked: Partial<ShownCounts> = {};
  for (const t of types) picked[t] = shownCount(counts[t], shown);
  return picked;
}

/** The batch read both routes answer: what no cache holds comes from one query per D1 database, never from the objects. */
async function batchCounts(
  c: Context<AppEnv>,
  items: readonly ItemRef[],
  counterTypes: readonly CounterType[] | undefined,
  uniqueViewers: boolean | undefined,
  route: string,
): Promise<{ counts: Record<string, Partial<ShownCounts> | null>; partial: boolean; stale: boolean }> {
  const types = counterTypes ? [...new Set(counterTypes)] : COUNTER_TYPES;
  const keys = [...new Set(items.map((i) => itemKey(i.item_type, i.item_id)))];
  const reads = await readMany({ env: c.env, ctx: c.executionCtx }, keys, route);
  // After the counts: the store's query read the settings of every item it read, so this queries only for items a cache served.
  const settings = await readSettings(c.env, keys, route);
  const viewer = c.get("viewer");
  const result: Record<string, Partial<ShownCounts> | null> = {};
  const shown = new Map<string, Disclosure>();
  let failed = 0;
  let stale = false;
  for (const key of keys) {
    const read = reads.get(key);
    shown.set(key, disclosure(settings.get(key)!, viewer));
    result[key] = read ? pick(read.counts, shown.get(key)!, types) : null;
    if (!read) failed++;
    stale ||= read?.stale === true;
  }
  if (failed === keys.length) throw unavailable("None of the items' counts can be read right now.");
  if (stale) c.header(STALE_HEADER, "true");
  if (uniqueViewers) await addUniqueViewers(c.env, result, (key) => shown.get(key)!, route);
  return { counts: result, partial: failed > 0, stale };
}

/** Up to 100 items at once; the common body is checked without zod (shared/counts-request.ts). */
counts.post("/v1/counts", readLimit, optionalUser, identifyViewer, async (c) => {
  const started = Date.now();
  const { items, counter_types, unique_viewers } = await readJson(c, CountsRequest, plainCountsRequest);
  const read = await batchCounts(c, items, counter_types, unique_viewers, "/v1/counts");
  return c.json({ counts: read.counts, took_ms: Date.now() - started, ...(read.partial ? { partial: true } : {}) });
});

/**
 * The same read as a GET, for CDNs and browsers: `public` and short-lived
 * without a token, `private` with one (docs/reads.md), with a weak ETag over
 * the counts so a revalidation costs a 304.
 */
counts.get("/v1/counts", readLimit, optionalUser, identifyViewer, async (c) => {
  const started = Date.now();
  const { items, counter_types, unique_viewers } = readQuery(c, CountsQuery);
  const read = await batchCounts(c, items, counter_types, unique_viewers, "/v1/counts");
  const etag = weakETag(read.counts);
  setReadCaching(c, etag, !read.partial && !read.stale);
  if (!read.partial && !read.stale && notModified(c, etag)) return c.body(null, 304);
  return c.json({ counts: read.counts, took_ms: Date.now() - started, ...(read.partial ? { partial: true } : {}) });
});
