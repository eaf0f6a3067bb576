import { countDatabases } from "../lib/count-databases";
import { d1 } from "../lib/d1";

type SweepRow = { cursor: number; pass_started_at: number; last_pass_started_at: number | null };

export type SweepShare = {
  /** The next items of the walk over the index, in draw order. */
  items: string[];
  /** Every indexed item has been checked since this time (the age of the oldest check). */
  oldestCheckAt: number;
};

/**
 * The next `limit` items of the walk over the index of every item counted
 * (migrations/0007_item_index.sql): one query per database from the stored
 * cursor, merged in draw order. A share shorter than `limit` ends the pass,
 * and the next run starts the walk again. Two runs at once may check some
 * items twice, which costs a check and harms nothing.
 */
export async function nextSweepShare(env: Env, limit: number, now: number): Promise<SweepShare> {
  const state =
    (await d1(env, env.DB, "reconcile").first<SweepRow>(
      env.DB.prepare("SELECT cursor, pass_started_at, last_pass_started_at FROM reconciliation_sweep WHERE id = 1"),
    )) ?? { cursor: -1, pass_started_at: now, last_pass_started_at: null };
  const perDatabase = await Promise.all(
    countDatabases(env).map((db) =>
      d1(env, db, "reconcile").all<{ draw: number; item: string }>(
        db.prepare("SELECT draw, item FROM item_index WHERE draw > ? ORDER BY draw LIMIT ?").bind(state.cursor, limit),
      ),
    ),
  );
  const share = perDatabase
    .flat()
    .sort((a, b) => a.draw - b.draw)
    .slice(0, limit);
  const passEnded = share.length < limit;
  const next: SweepRow = passEnded
    ? { cursor: -1, pass_started_at: now, last_pass_started_at: state.pass_started_at }
    : { ...state, cursor: share[share.length - 1]!.draw };
  await d1(env, env.DB, "reconcile").run(
    env.DB.prepare(
      `INSERT INTO reconciliation_sweep (id, cursor, pass_started_at, last_pass_started_at) VALUES (1, ?1, ?2, ?3)
       ON CONFLICT (id) DO UPDATE SET cursor = ?1, pass_started_at = ?2, last_pass_started_at = ?3`,
    ).bind(next.cursor, next.pass_started_at, next.last_pass_started_at),
  );
  return { items: share.map(({ item }) => item), oldestCheckAt: state.last_pass_started_at ?? state.pass_started_at };
}
