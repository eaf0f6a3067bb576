import { Hono } from "hono";
import { itemKey } from "../../shared/counters";
import { disclosure } from "../../shared/privacy";
import { HistoryQuery, type HistoryResponse } from "../../shared/schemas";
import { countDatabaseFor } from "../stores/count-databases";
import { unavailable } from "../lib/errors";
import { historyDays, readHistory, shownHistory } from "../reads/history-reader";
import { readQuery } from "../lib/validation";
import { optionalUser } from "../middleware/auth";
import { readLimit } from "../middleware/read-limit";
import { identifyViewer } from "../middleware/viewer";
import { readSettings } from "../privacy/item-settings";
import type { AppEnv } from "../types";

export const history = new Hono<AppEnv>();

/**
 * An item's daily likes, saves, views and shares, as the viewer may read
 * them. Read from D1, where the aggregator keeps each day's end-of-day
 * totals. The rows are read whoever asks, so an item the viewer may not see
 * fails when the store fails, as an untouched one does, and then answers the
 * untouched item's zeros; a hidden count is null on every day.
 */
history.get("/v1/history", readLimit, optionalUser, identifyViewer, async (c) => {
  const { item_id, item_type, days } = readQuery(c, HistoryQuery);
  const key = itemKey(item_type, item_id);
  const now = Date.now();
  const [rows, settings] = await Promise.all([
    readHistory(c.env, countDatabaseFor(c.env, key), key, days, now).catch(() => {
      throw unavailable("The item's history cannot be read right now.");
    }),
    readSettings(c.env, [key], "/v1/history"),
  ]);
  const shown = disclosure(settings.get(key)!, c.get("viewer"));
  const answer = shown === "untouched" ? historyDays([], days, now) : shown === "hidden" ? shownHistory(rows) : rows;
  return c.json<HistoryResponse>({ item_id, item_type, days: answer });
});
