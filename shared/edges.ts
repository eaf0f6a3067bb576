import type { ToggleCounter } from "./counters";

/**
 * A version that never goes backwards for one user: the incarnation is bumped
 * when the user's data is wiped or restored, so a new sequence still wins over
 * everything the item side saw before.
 */
export type Version = { inc: number; seq: number };

/** One user's new state for one toggle counter on one item. */
export type EdgeChange = Version & {
  user: string;
  counter: ToggleCounter;
  state: 0 | 1;
  /**
   * When the user asked for this state (ms since the epoch): a like's
   * `liked_at`. Ordering stays with the version; the time only travels with it.
   */
  at: number;
};

export function isNewer(a: Version, b: Version): boolean {
  return a.inc > b.inc || (a.inc === b.inc && a.seq > b.seq);
}
