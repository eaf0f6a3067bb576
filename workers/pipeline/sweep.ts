import { d1 } from "../stores/d1";
import { indexPage } from "./index-walk";

type SweepRow = { cursor: number; cursor_item: string; pass_started_at: number; last_pass_started_at: number | null };

export type SweepShare = {
  /** The next items of the walk over the index, in draw order. */
  items: string[];
  /** Every indexed item has been checked since this time (the age of the oldest check). */
  oldestCheckAt: number;
};

/**
 * The next `limit` items of the walk over the index of every item counted
 * (migrations/0007_item_index.sql), from the stored cursor (workers/pipeline/index-walk.ts).
 * The share that reaches the end of the index ends the pass, and the next run
 * starts the walk again. Two runs at once may check some items twice, which
 * costs a check and harms nothing.
 */
export async function nextSweepShare(env: Env, limit: number, now: number): Promise<SweepShare> {
  const state =
    (await d1(env, env.DB, "reconcile").first<SweepRow>(
      env.DB.prepare("SELECT cursor, cursor_item, pass_started_at, last_pass_started_at FROM reconciliation_sweep WHERE id = 1"),
    )) ?? { cursor: -1, cursor_item: "", pass_started_at: now, last_pass_started_at: null };
  const page = await indexPage(env, "item_index", { draw: state.cursor, key: state.cursor_item }, limit, "reconcile");
  const last = page.entries.at(-1);
  const next: SweepRow =
    page.done || !last
      ? { cursor: -1, cursor_item: "", pass_started_at: now, last_pass_started_at: state.pass_started_at }
      : { ...state, cursor: last.draw, cursor_item: last.key };
  await d1(env, env.DB, "reconcile").run(
    env.DB.prepare(
      `INSERT INTO reconciliation_sweep (id, cursor, cursor_item, pass_started_at, last_pass_started_at) VALUES (1, ?1, ?2, ?3, ?4)
       ON CONFLICT (id) DO UPDATE SET cursor = ?1, cursor_item = ?2, pass_started_at = ?3, last_pass_started_at = ?4`,
    ).bind(next.cursor, next.cursor_item, next.pass_started_at, next.last_pass_started_at),
  );
  return { items: page.entries.map(({ key }) => key), oldestCheckAt: state.last_pass_started_at ?? state.pass_started_at };
}
