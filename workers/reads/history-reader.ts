import type { HistoryResponse } from "../../shared/schemas";
import { shownCount, type Disclosure } from "../../shared/privacy";
import { utcDay } from "../stores/item-history";
import { byCountDatabase } from "../stores/count-databases";
import { d1 } from "../stores/d1";
import { unavailable } from "../lib/errors";
import { splitItem } from "../stores/item-key";

type Totals = { likes: number; saves: number; views: number; shares: number };
type Row = Totals & { day: string };

const DAY_MS = 86_400_000;

/**
 * An item's last `days` UTC days, oldest first: each day's change and its
 * end-of-day totals. One query: the rows in the range plus the last row
 * before it (the first day's baseline). A day without a row had no change.
 */
export async function readHistory(env: Env, db: D1Database, item: string, days: number, now = Date.now()): Promise<HistoryResponse["days"]> {
  const [type, id] = splitItem(item);
  const first = utcDay(now - (days - 1) * DAY_MS);
  const results = await d1(env, db, "/v1/history").all<Row>(
    db.prepare(
      `SELECT day, likes, saves, views, shares FROM item_history
       WHERE item_type = ?1 AND item_id = ?2
         AND day >= (SELECT COALESCE(MAX(day), ?3) FROM item_history WHERE item_type = ?1 AND item_id = ?2 AND day < ?3)
       ORDER BY day`,
    ).bind(type, id, first),
  );
  return historyDays(results, days, now);
}

/** Dense days from the rows of a range (and the baseline row before it), oldest first. */
export function historyDays(results: readonly Row[], days: number, now: number): HistoryResponse["days"] {
  const first = utcDay(now - (days - 1) * DAY_MS);
  const byDay = new Map(results.map((row) => [row.day, row]));
  let previous: Totals = results[0] && results[0].day < first ? results[0] : { likes: 0, saves: 0, views: 0, shares: 0 };
  const answer: HistoryResponse["days"] = [];
  for (let i = days - 1; i >= 0; i--) {
    const date = utcDay(now - i * DAY_MS);
    const row = byDay.get(date);
    const totals: Totals = row ? { likes: row.likes, saves: row.saves, views: row.views, shares: row.shares } : previous;
    answer.push({
      date,
      likes: totals.likes - previous.likes,
      saves: totals.saves - previous.saves,
      views: totals.views - previous.views,
      shares: totals.shares - previous.shares,
      totals,
    });
    previous = totals;
  }
  return answer;
}

/** Every day of a history whose counts the owner hides from the viewer: the dates only, each count null. */
export function shownHistory(days: HistoryResponse["days"]): HistoryResponse["days"] {
  const hidden = { likes: null, saves: null, views: null, shares: null };
  return days.map(({ date }) => ({ date, ...hidden, totals: { ...hidden } }));
}

/**
 * Adds `unique_viewers` to each answered item's counts (entries that are null,
 * items that could not be read, stay null): their newest snapshot in D1, in
 * one query; an item without history has had no viewers. Every answered item
 * is queried, whoever asks, so an item the viewer may not see fails with the
 * store as an untouched one does; it then answers 0, and a hidden one null.
 */
export async function addUniqueViewers(
  env: Env,
  entries: Record<string, object | null>,
  shown: (item: string) => Disclosure,
  caller: string,
): Promise<void> {
  const items = Object.keys(entries).filter((item) => entries[item]);
  if (items.length === 0) return;
  // One query per database that holds some of the items, as for their counts.
  const found = new Map<string, number>();
  await Promise.all(
    [...byCountDatabase(env, items, (item) => item)].map(async ([db, group]) => {
      for (const [item, viewers] of await readUniqueViewers(env, db, group, caller)) found.set(item, viewers);
    }),
  ).catch(() => {
    throw unavailable("Unique viewers cannot be read right now.");
  });
  for (const item of items) Object.assign(entries[item]!, { unique_viewers: shownCount(found.get(item) ?? 0, shown(item)) });
}

async function readUniqueViewers(env: Env, db: D1Database, items: readonly string[], caller: string): Promise<Map<string, number>> {
  const pairs = items.map(splitItem);
  const results = await d1(env, db, caller).all<{ item_type: string; item_id: string; unique_viewers: number | null }>(
    db.prepare(
      `SELECT h.item_type, h.item_id, h.unique_viewers FROM item_history h
       JOIN (SELECT item_type, item_id, MAX(day) AS day FROM item_history
             WHERE (item_type, item_id) IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?))
             GROUP BY item_type, item_id) newest
         ON h.item_type = newest.item_type AND h.item_id = newest.item_id AND h.day = newest.day`,
    ).bind(JSON.stringify(pairs)),
  );
  return new Map(results.map((row) => [`${row.item_type}:${row.item_id}`, row.unique_viewers ?? 0]));
}
