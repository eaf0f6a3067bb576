import { indexPage } from "../stores/index-walk";
import { readSweepCursor, writeSweepCursor, type SweepCursor } from "../stores/reconciliation";

export type SweepShare = {
  /** The next items of the walk over the index, in draw order. */
  items: string[];
  /** Every indexed item has been checked since this time (the age of the oldest check). */
  oldestCheckAt: number;
};

/**
 * The next `limit` items of the walk over the index of every item counted
 * (migrations/0007_item_index.sql), from the stored cursor (workers/stores/index-walk.ts).
 * The share that reaches the end of the index ends the pass, and the next run
 * starts the walk again. Two runs at once may check some items twice, which
 * costs a check and harms nothing.
 */
export async function nextSweepShare(env: Env, limit: number, now: number): Promise<SweepShare> {
  const state = (await readSweepCursor(env)) ?? { cursor: -1, cursor_item: "", pass_started_at: now, last_pass_started_at: null };
  const page = await indexPage(env, "item_index", { draw: state.cursor, key: state.cursor_item }, limit, "reconcile");
  const last = page.entries.at(-1);
  const next: SweepCursor =
    page.done || !last
      ? { cursor: -1, cursor_item: "", pass_started_at: now, last_pass_started_at: state.pass_started_at }
      : { ...state, cursor: last.draw, cursor_item: last.key };
  await writeSweepCursor(env, next);
  return { items: page.entries.map(({ key }) => key), oldestCheckAt: state.last_pass_started_at ?? state.pass_started_at };
}
