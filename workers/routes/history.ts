import { Hono } from "hono";
import { itemKey } from "../../shared/counters";
import { HistoryQuery, type HistoryResponse } from "../../shared/schemas";
import { visibility } from "../../shared/visibility";
import { countDatabaseFor } from "../stores/count-databases";
import { unavailable } from "../lib/errors";
import { historyDays, readHistory } from "../reads/history-reader";
import { readQuery } from "../lib/validation";
import { readLimit } from "../middleware/read-limit";
import type { AppEnv } from "../types";

export const history = new Hono<AppEnv>();

/**
 * An item's daily likes, saves, views and shares (public). Read from D1,
 * where the aggregator keeps each day's end-of-day totals; an item a viewer
 * may not see reads as an item nobody touched.
 */
history.get("/v1/history", readLimit, async (c) => {
  const { item_id, item_type, days } = readQuery(c, HistoryQuery);
  const key = itemKey(item_type, item_id);
  const rows = visibility(null, key).counts
    ? await readHistory(c.env, countDatabaseFor(c.env, key), key, days).catch(() => {
        throw unavailable("The item's history cannot be read right now.");
      })
    : historyDays([], days, Date.now());
  return c.json<HistoryResponse>({ item_id, item_type, days: rows });
});
