import { TOGGLE_COUNTERS, type Counts } from "../../shared/counters";
import type { ChildReport, ItemDescription } from "../../shared/contracts";
import type { Sql } from "./metered-storage";

type StoredChild = ChildReport & { reportedAt: number };

/**
 * The newest report of each child of a hot item, as its head keeps them: one
 * row per child in the head's `children` table. A report is absolute and
 * carries the child's sequence number, so a repeated or delayed older one is
 * dropped and the item's total is the head's own count plus these.
 */
export class ChildReports {
  #children = new Map<number, StoredChild>();

  constructor(private readonly sql: Sql) {}

  load(): void {
    for (const row of this.sql.exec<{ idx: number; likes: number; saves: number; seq: number; writes: number; reported_at: number }>(
      "SELECT idx, likes, saves, seq, writes, reported_at FROM children",
    )) {
      this.#children.set(row.idx, { likes: row.likes, saves: row.saves, seq: row.seq, writes: row.writes, reportedAt: row.reported_at });
    }
  }

  /** The writes a report adds to what is already known of its child (0 for an old one). */
  newWrites(index: number, report: ChildReport): number {
    const previous = this.#children.get(index);
    return previous && report.seq <= previous.seq ? 0 : Math.max(0, report.writes - (previous?.writes ?? 0));
  }

  /** Of these reports, the ones newer than what is stored, the newest per child. */
  newer(reports: Iterable<readonly [number, ChildReport]>): Map<number, ChildReport> {
    const fresh = new Map<number, ChildReport>();
    for (const [index, report] of reports) {
      const previous = fresh.get(index) ?? this.#children.get(index);
      if (!previous || report.seq > previous.seq) fresh.set(index, report);
    }
    return fresh;
  }

  /** Inside the head's transaction. */
  write(reports: ReadonlyMap<number, ChildReport>, now: number): void {
    for (const [index, report] of reports) {
      this.sql.exec(
        `INSERT INTO children (idx, likes, saves, seq, writes, reported_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (idx) DO UPDATE SET likes = excluded.likes, saves = excluded.saves, seq = excluded.seq,
           writes = excluded.writes, reported_at = excluded.reported_at`,
        index,
        report.likes,
        report.saves,
        report.seq,
        report.writes,
        now,
      );
    }
  }

  /** After the head's transaction committed. */
  committed(reports: ReadonlyMap<number, ChildReport>, now: number): void {
    for (const [index, report] of reports) this.#children.set(index, { ...report, reportedAt: now });
  }

  /** The item's total: the head's own counts plus every child's newest report (and these, not yet stored). */
  total(own: Counts, pending?: ReadonlyMap<number, ChildReport>): Counts {
    const total = { ...own };
    const add = (report: ChildReport) => {
      for (const counter of TOGGLE_COUNTERS) total[counter] += report[counter];
    };
    for (const [index, report] of this.#children) if (!pending?.has(index)) add(report);
    if (pending) for (const report of pending.values()) add(report);
    return total;
  }

  describe(): ItemDescription["children"] {
    return [...this.#children]
      .sort(([a], [b]) => a - b)
      .map(([index, c]) => ({
        index,
        likes: c.likes,
        saves: c.saves,
        seq: c.seq,
        writes: c.writes,
        reported_at: new Date(c.reportedAt).toISOString(),
      }));
  }
}

export function sameCounts(a: Counts, b: Counts): boolean {
  return (Object.keys(a) as (keyof Counts)[]).every((counter) => a[counter] === b[counter]);
}
