import { zeroCounts, type Counts } from "../../shared/counters";
import type { EdgeChange } from "../../shared/edges";
import type { Placement } from "../../shared/placement";
import type { Sql } from "./metered-storage";
import type { StateRow } from "./state-row";

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
  /** The earliest the item may cool by the writes the head has seen, stored to within COOLS_AT_STEP_MS (ItemCounter.ts). */
  coolsAt: number;
};

export function emptyHeadState(): HeadState {
  return { counts: zeroCounts(), placement: { hot: false, shards: 0 }, hotSince: 0, handing: null, coolsAt: 0 };
}

export function loadHeadState(sql: Sql): HeadState {
  const row = sql
    .exec<{ likes: number; saves: number; views: number; shares: number; hot: number; shards: number; hot_since: number; handing: string | null; cools_at: number }>(
      "SELECT likes, saves, views, shares, hot, shards, hot_since, handing, cools_at FROM state",
    )
    .toArray()[0];
  if (!row) return emptyHeadState();
  return {
    counts: { likes: row.likes, saves: row.saves, views: row.views, shares: row.shares },
    placement: { hot: row.hot === 1, shards: row.shards },
    hotSince: row.hot_since,
    // A batch stored before edges kept their time has none: 0, as the migration gives old edges.
    handing: row.handing === null ? null : (JSON.parse(row.handing) as HandedEdge[]).map((edge) => ({ ...edge, at: edge.at ?? 0 })),
    coolsAt: row.cools_at,
  };
}

/** Inside the head's transaction: written with the state row at the commit's end (with the emission outbox, when it changed too). */
export function writeHeadState(row: StateRow, state: HeadState): void {
  row.stage("head", {
    columns: () => ({
      likes: state.counts.likes,
      saves: state.counts.saves,
      views: state.counts.views,
      shares: state.counts.shares,
      hot: state.placement.hot ? 1 : 0,
      shards: state.placement.shards,
      hot_since: state.hotSince,
      handing: state.handing === null ? null : JSON.stringify(state.handing),
      cools_at: state.coolsAt,
    }),
  });
}
