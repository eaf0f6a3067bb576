import type { Config } from "../../shared/config";

/** The last recheck a head asked for: when, and the head's snapshot sequence then. */
export type RecheckMark = { at: number; seq: number };

/** What the rule needs to know of the item. */
export type RecheckSubject = {
  hot: boolean;
  likes: number;
  /** The head's snapshot sequence: it moves with every change of the item's counts (0: never counted). */
  seq: number;
  /** A hot item's: the end of the last second it took a write in (the head's or a child's), as far as the head remembers; null: none since it woke, or not hot (the rule reads it only for a hot item). */
  lastWriteAt: number | null;
};

export type RecheckSettings = { intervalMs: number; likes: number };

export type RecheckPlan = { send: false; wakeAt: number | null } | { send: true; mark: RecheckMark; wakeAt: number | null };

export function recheckSettings(settings: Config): RecheckSettings {
  return { intervalMs: settings.RECHECK_INTERVAL_SECONDS * 1000, likes: settings.RECHECK_LIKES };
}

/**
 * Whether an item is still rechecked: a hot item, and an item with at least
 * `likes` likes, while it has changed since its last recheck; a hot item also
 * while it takes writes (a write that changes no count still goes through its
 * stores' path), until a recheck finds none in the interval before it. So an
 * item whose writes stopped is rechecked once or twice more, then not, even
 * while it stays hot: an idle system does no work. An item never counted has
 * nothing stored to compare.
 */
export function rechecking(item: RecheckSubject, last: RecheckMark | null, settings: RecheckSettings): boolean {
  if (item.seq === 0) return false;
  const changed = item.seq !== last?.seq;
  if (item.hot) return changed || (item.lastWriteAt !== null && item.lastWriteAt > last!.at - settings.intervalMs);
  return item.likes >= settings.likes && changed;
}

/**
 * What the head's alarm does, pure: ask for a recheck when the last one is an
 * interval old (or unknown), and when to wake for the next. The next is
 * judged with the mark this request leaves, so a large item's rechecks end
 * with the first one after its last change, at most an interval after it
 * (a later change brings the emitter's alarm, which plans again), and a hot
 * item's with the first one an interval past its last write, or when it
 * cools.
 */
export function planRecheck(now: number, item: RecheckSubject, last: RecheckMark | null, settings: RecheckSettings): RecheckPlan {
  if (!rechecking(item, last, settings)) return { send: false, wakeAt: null };
  const dueAt = last === null ? now : last.at + settings.intervalMs;
  if (dueAt > now) return { send: false, wakeAt: dueAt };
  const mark = { at: now, seq: item.seq };
  return { send: true, mark, wakeAt: rechecking(item, mark, settings) ? now + settings.intervalMs : null };
}
