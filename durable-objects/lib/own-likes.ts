import type { UserEdge } from "../../shared/contracts";
import type { OwnLikesPosition } from "../../shared/own-likes";
import type { Sql } from "./metered-storage";

export type OwnLikesPage = { itemType: string | null; limit: number; after: OwnLikesPosition | null };

/** Exported for the test that checks it is served by the index. */
export const OWN_LIKES_PAGE = `SELECT item, at FROM edges
  WHERE counter = 'likes' AND state = 1 AND (at < ? OR (at = ? AND item < ?)) AND substr(item, 1, length(?)) = ?
  ORDER BY at DESC, item DESC LIMIT ?`;

/**
 * One page of a user's current likes, newest first, from the user's edges
 * (index `likes_by_time`). Keyset paging on (at, item): a page starts
 * strictly after the previous page's last row, so a concurrent like (newer
 * than every cursor) neither repeats nor pushes out a row of a later page.
 */
export function ownLikes(sql: Sql, page: OwnLikesPage): OwnLikesPosition[] {
  const after = page.after ?? { at: Number.MAX_SAFE_INTEGER, item: "" };
  const prefix = page.itemType === null ? "" : `${page.itemType}:`;
  return sql
    .exec<OwnLikesPosition>(
      OWN_LIKES_PAGE,
      after.at,
      after.at,
      after.item,
      prefix,
      prefix,
      page.limit,
    )
    .toArray();
}

/**
 * The user's edges after `after` (item, counter) in key order, liked or not,
 * for a rebuild of the central store. Edges never emitted (sequence 0: an
 * unlike of an edge the user never had, kept only for I6) are left out:
 * no store ever held them.
 */
export function edgesAfter(sql: Sql, after: { item: string; counter: string } | null, limit: number): UserEdge[] {
  const from = after ?? { item: "", counter: "" };
  return sql
    .exec<UserEdge>(
      `SELECT item, counter, state, inc, seq, at FROM edges WHERE (item, counter) > (?, ?) AND seq > 0 ORDER BY item, counter LIMIT ?`,
      from.item,
      from.counter,
      limit,
    )
    .toArray();
}

/** Which of `items` the user's edges hold in state 1 for `counter`: one query, answered from the edges alone. */
export function likedAmong(sql: Sql, items: readonly string[], counter: string): Record<string, boolean> {
  const liked: Record<string, boolean> = Object.fromEntries(items.map((item) => [item, false]));
  const rows = sql.exec<{ item: string }>(
    "SELECT item FROM edges WHERE counter = ? AND state = 1 AND item IN (SELECT value FROM json_each(?))",
    counter,
    JSON.stringify(items),
  );
  for (const { item } of rows) liked[item] = true;
  return liked;
}
