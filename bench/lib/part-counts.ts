// Counts by named part, shared by the native CPU samples (lib/native.ts) and
// the flush trace (lib/flushes.ts): each names its parts by the frames of a
// stack, and sums a phase's counts into a side's total the same way.

/** A part of a server's work, and the frames that put a sample or a flush in it. */
export type NativePart = { name: string; frames: RegExp };

/** Samples (or flushes) per part, for one server over the phases traced. */
export type NativeCounts = Map<string, number>;

/** Adds `n` to a part. */
export function tally(counts: NativeCounts, part: string, n = 1): void {
  counts.set(part, (counts.get(part) ?? 0) + n);
}

/** How many the counts hold in all. */
export function sampleCount(counts: NativeCounts): number {
  return [...counts.values()].reduce((a, b) => a + b, 0);
}

/** Adds one phase's counts into a side's running total. */
export function addCounts(total: NativeCounts, phase: NativeCounts): void {
  for (const [part, n] of phase) tally(total, part, n);
}
