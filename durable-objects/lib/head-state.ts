import { zeroCounts, type Counts } from "../../shared/counters";
import type { EdgeChange } from "../../shared/edges";
import type { Placement } from "../../shared/placement";
import type { Sql } from "./metered-storage";

/** An edge on its way from the head to child `child`, at the version the head held. */
export type HandedEdge = EdgeChange & { child: number };

/** An item head's single-value state, stored as one row so a commit rewrites one row, not one per value. */
export type HeadState = {
  /** The head's own counts (not its children's), views and shares included. */
  counts: Counts;
  placement: Placement;
  /** When the item last turned hot: a woken head measures its write rate from there. */
  hotSince: number;
  /** The hand-over batch marked and not yet finished. */
  handing: HandedEdge[] | null;
};

export function emptyHeadState(): HeadState {
  return { counts: zeroCounts(), placement: { hot: false, shards: 0 }, hotSince: 0, handing: null };
}

export function loadHeadState(sql: Sql): HeadState {
  const row = sql
    .exec<{ likes: number; saves: number; views: number; shares: number; hot: number; shards: number; hot_since: number; handing: string | null }>(
      "SELECT likes, saves, views, shares, hot, shards, hot_since, handing FROM state",
    )
    .toArray()[0];
  if (!row) return emptyHeadState();
  return {
    counts: { likes: row.likes, saves: row.saves, views: row.views, shares: row.shares },
    placement: { hot: row.hot === 1, shards: row.shards },
    hotSince: row.hot_since,
    // A batch stored before edges kept their time has none: 0, as the migration gives old edges.
    handing: row.handing === null ? null : (JSON.parse(row.handing) as HandedEdge[]).map((edge) => ({ ...edge, at: edge.at ?? 0 })),
  };
}

/** Inside the head's transaction. */
export function writeHeadState(sql: Sql, state: HeadState): void {
  sql.exec(
    `INSERT INTO state (id, likes, saves, views, shares, hot, shards, hot_since, handing) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET likes = excluded.likes, saves = excluded.saves, views = excluded.views,
       shares = excluded.shares, hot = excluded.hot, shards = excluded.shards, hot_since = excluded.hot_since,
       handing = excluded.handing`,
    state.counts.likes,
    state.counts.saves,
    state.counts.views,
    state.counts.shares,
    state.placement.hot ? 1 : 0,
    state.placement.shards,
    state.hotSince,
    state.handing === null ? null : JSON.stringify(state.handing),
  );
}
