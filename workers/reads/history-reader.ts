import type { HistoryResponse } from "../../shared/schemas";
import { shownCount, type Disclosure } from "../../shared/privacy";
import { historyRows, newestUniqueViewers, utcDay, type HistoryRow as Row } from "../stores/item-history";
import { byCountDatabase } from "../stores/count-databases";
import { unavailable } from "../lib/errors";

type Totals = Omit<Row, "day">;

const DAY_MS = 86_400_000;

/**
 * An item's last `days` UTC days, oldest first: each day's change and its
 * end-of-day totals. One query: the rows in the range plus the last row
 * before it (the first day's baseline). A day without a row had no change.
 */
export async function readHistory(env: Env, db: D1Database, item: string, days: number, now = Date.now()): Promise<HistoryResponse["days"]> {
  const first = utcDay(now - (days - 1) * DAY_MS);
  const results = await historyRows(env, db, item, first, "/v1/history");
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
      for (const [item, viewers] of await newestUniqueViewers(env, db, group, caller)) found.set(item, viewers);
    }),
  ).catch(() => {
    throw unavailable("Unique viewers cannot be read right now.");
  });
  for (const item of items) Object.assign(entries[item]!, { unique_viewers: shownCount(found.get(item) ?? 0, shown(item)) });
}
