import { countDatabaseIndex } from "./count-databases";

/**
 * A reshard's phases, in order (docs/reads.md, "Resharding"):
 * - `dual`: writes go to both layouts, reads to the old one;
 * - `copy`: the old layout's rows are copied into the new one; reads go to both (newest row wins);
 * - `switch`: reads and writes still go to both; the copy is verified;
 * - `cleanup`: reads and writes go to the new layout only; the moved rows are deleted from the old one.
 * Every phase lasts at least RESHARD_GRACE_MS, longer than any isolate keeps
 * a layout (LAYOUT_TTL_MS), so no two isolates are ever more than one phase apart.
 */
export const RESHARD_PHASES = ["dual", "copy", "switch", "cleanup"] as const;
export type ReshardPhase = (typeof RESHARD_PHASES)[number];

/** How many databases hold the counts, and the reshard under way, if any. */
export type CountLayout = { databases: number; next: { databases: number; phase: ReshardPhase } | null };

/** The databases (by index) a read of an item's counts and settings asks. */
export function readIndexes(layout: CountLayout, item: string): number[] {
  const old = countDatabaseIndex(item, layout.databases);
  if (!layout.next || layout.next.phase === "dual") return [old];
  const next = countDatabaseIndex(item, layout.next.databases);
  // Through `switch` the old database is asked too: a replica of the new one may lack the last rows the copy wrote.
  if (layout.next.phase !== "cleanup" && next !== old) return [old, next];
  return [next];
}

/** The databases (by index) a write of an item's counts or settings goes to. */
export function writeIndexes(layout: CountLayout, item: string): number[] {
  const old = countDatabaseIndex(item, layout.databases);
  if (!layout.next) return [old];
  const next = countDatabaseIndex(item, layout.next.databases);
  if (layout.next.phase === "cleanup" || next === old) return [next];
  return [old, next];
}

/** How many databases either layout uses: every one of them may hold rows. */
export function layoutWidth(layout: CountLayout): number {
  return Math.max(layout.databases, layout.next?.databases ?? 0);
}
