import { log } from "../../shared/log";
import type { ChildReport } from "../../shared/contracts";
import type { EdgeChange } from "../../shared/edges";
import { childFor, type Placement } from "../../shared/placement";
import { sameCounts, type ChildReports } from "./child-reports";
import type { Alarm } from "./alarm";
import type { Emitter } from "./emitter";
import { writeHeadState, type HandedEdge, type HeadState } from "./head-state";
import type { MeteredStorage, Sql } from "./metered-storage";
import type { StateRow } from "./state-row";

/** What the hand-over needs of the head. */
export type HeadParts = {
  storage: MeteredStorage;
  row: StateRow;
  emitter: Emitter;
  alarm: Alarm;
  children: ChildReports;
  state: () => HeadState;
  setState: (state: HeadState) => void;
  /** Sends a child the edges it adopts; resolves with its report after its commit. */
  adopt: (child: number, edges: readonly EdgeChange[]) => Promise<ChildReport>;
};

/** A failed step is retried by the head's alarm after this long. */
const RETRY_MS = 1_000;

/**
 * Inside the head's mark commit: the next edges the head still holds, now
 * moved to the child their user hashes to. From this commit on the head
 * refuses changes to them with their child, so an edge never has two homes.
 */
export function markMoved(sql: Sql, placement: Placement, limit: number): HandedEdge[] {
  const rows = sql
    .exec<{ user: string; counter: EdgeChange["counter"]; state: 0 | 1; inc: number; seq: number; at: number }>(
      "SELECT user, counter, state, inc, seq, at FROM edges WHERE moved IS NULL ORDER BY user, counter LIMIT ?",
      limit,
    )
    .toArray();
  const batch = rows.map((row) => ({ ...row, child: childFor(row.user, placement.shards) }));
  for (const edge of batch) {
    sql.exec("UPDATE edges SET moved = ? WHERE user = ? AND counter = ?", edge.child, edge.user, edge.counter);
  }
  return batch;
}

/**
 * Moves a hot head's existing edges to its children in the background, a
 * batch at a time: mark (the head refuses them from then on), adopt (each
 * child applies them under the usual newer-version rule, so a change a user
 * sent the child meanwhile wins), finish (the head stops counting them and
 * takes the children's reports in the same commit). A crash between steps
 * leaves the batch stored and the next run resumes it: adopting twice is a
 * no-op, and the head subtracts a batch exactly once, in `finish`.
 */
export class Handover {
  /** Runs that failed (a child refused or did not answer in time) and were left to the alarm, for tests. */
  failures = 0;
  #running = false;

  constructor(
    private readonly head: HeadParts,
    private readonly batchSize: () => number,
  ) {}

  /** Starts the hand-over if it has work and is not already running. */
  run(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop()
      .catch((error) => {
        this.failures++;
        log("error", "handover_failed", { error: String(error) });
        try {
          this.head.alarm.request(Date.now() + RETRY_MS);
        } catch (unscheduled) {
          // An object reset or aborted mid-batch cannot set its alarm: its next instance resumes the stored batch on waking.
          log("error", "handover_retry_unscheduled", { error: String(unscheduled) });
        }
      })
      .finally(() => (this.#running = false));
  }

  async #loop(): Promise<void> {
    for (;;) {
      let batch = this.head.state().handing;
      if (batch === null) {
        if (!this.head.state().placement.hot) return;
        batch = this.#mark(this.batchSize());
        if (batch === null) return;
      }
      const byChild = new Map<number, EdgeChange[]>();
      for (const { child, ...edge } of batch) byChild.set(child, [...(byChild.get(child) ?? []), edge]);
      const reports = new Map<number, ChildReport>();
      await Promise.all([...byChild].map(async ([child, edges]) => reports.set(child, await this.head.adopt(child, edges))));
      this.#finish(batch, reports);
    }
  }

  /** Commit: marks the next edges as moved and stores them as the batch in flight; null when none is left. */
  #mark(limit: number): HandedEdge[] | null {
    const { storage } = this.head;
    if (storage.sql.exec("SELECT 1 FROM edges WHERE moved IS NULL LIMIT 1").toArray().length === 0) return null;
    const state = this.head.state();
    const handing = storage.commit(() => {
      const marked = markMoved(storage.sql, state.placement, limit);
      writeHeadState(this.head.row, { ...state, handing: marked });
      return marked;
    });
    this.head.setState({ ...state, handing });
    return handing;
  }

  /** Commit: the head stops counting the batch, takes the children's reports and clears the batch. */
  #finish(batch: readonly HandedEdge[], reports: ReadonlyMap<number, ChildReport>): void {
    const { storage, emitter, children } = this.head;
    const now = Date.now();
    const state = this.head.state();
    const before = children.total(state.counts);
    const counts = { ...state.counts };
    for (const edge of batch) counts[edge.counter] -= edge.state;
    const newer = children.newer(reports);
    const next = { ...state, counts, handing: null };
    storage.commit(() => {
      emitter.fold();
      children.write(newer, now);
      writeHeadState(this.head.row, next);
      if (!sameCounts(before, children.total(counts, newer))) emitter.recordCounts();
    });
    this.head.setState(next);
    children.committed(newer, now);
    emitter.wake();
    log("info", "edges_handed_over", { edges: batch.length });
  }
}
