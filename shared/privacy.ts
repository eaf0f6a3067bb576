import type { Counts } from "./counters";

/** Who may see an item: everyone, the owner and whoever the host app grants, or the owner alone. */
export const VISIBILITIES = ["public", "followers", "private"] as const;
export type Visibility = (typeof VISIBILITIES)[number];

/** What the host app told plaudit about an item (docs/privacy.md). */
export type ItemSettings = { owner: string | null; visibility: Visibility; hideCounts: boolean };

/** An item the host app never described: public, no owner, counts shown. */
export const UNKNOWN_ITEM: ItemSettings = Object.freeze({ owner: null, visibility: "public", hideCounts: false });

/**
 * Who is reading: the user of the request's token (null when it has none),
 * and the owners whose followers-only items a grant from the host app lets
 * them see.
 */
export type Viewer = { userId: string | null; followersOf: ReadonlySet<string> };

export const ANONYMOUS: Viewer = Object.freeze({ userId: null, followersOf: new Set<string>() });

export function canSee(item: ItemSettings, viewer: Viewer): boolean {
  if (item.visibility === "public") return true;
  if (item.owner === null) return false;
  if (viewer.userId === item.owner) return true;
  return item.visibility === "followers" && viewer.followersOf.has(item.owner);
}

/**
 * How a viewer is answered about an item: its counts, hidden counts (null,
 * the owner chose so), or nothing at all: an item the viewer may not see is
 * answered exactly as one nobody touched, so the answer gives no hint.
 */
export type Disclosure = "counts" | "hidden" | "untouched";

export function disclosure(item: ItemSettings, viewer: Viewer): Disclosure {
  if (!canSee(item, viewer)) return "untouched";
  // An item without an owner (never given one, or its owner's account was deleted) hides its counts from everyone.
  if (item.hideCounts && (item.owner === null || viewer.userId !== item.owner)) return "hidden";
  return "counts";
}

/** A count as a viewer may read it: null when hidden. */
export type ShownCounts = { [K in keyof Counts]: number | null };

export function shownCounts(counts: Counts, shown: Disclosure): ShownCounts {
  return {
    likes: shownCount(counts.likes, shown),
    views: shownCount(counts.views, shown),
    shares: shownCount(counts.shares, shown),
    saves: shownCount(counts.saves, shown),
  };
}

/** One count as a viewer may read it (the like answer's `count`). */
export function shownCount(count: number, shown: Disclosure): number | null {
  return shown === "counts" ? count : shown === "hidden" ? null : 0;
}
