import { packItems, unpackItems } from "./live";
import { ANONYMOUS, type Viewer } from "./privacy";

/**
 * Who a live socket's viewer is, as the Worker established it when the
 * socket opened: the token's user (null: anonymous), the owners the host
 * app's grant named, and until when that grant holds (ms; 0: no grant).
 */
export type LiveViewer = { userId: string | null; followersOf: string[]; grantUntil: number };

export const ANONYMOUS_LIVE: LiveViewer = Object.freeze({ userId: null, followersOf: [], grantUntil: 0 });

/**
 * Most owners a live socket's grant may name: the socket's viewer shares its
 * 2,048-byte hibernation attachment with up to 100 packed items (1,499
 * bytes), and an owner takes at most 14 bytes packed.
 */
export const MAX_LIVE_GRANT_OWNERS = 25;

/** The request header on which the Worker hands a new socket's viewer to its hub; the Worker drops it from the client's request. */
export const LIVE_VIEWER_HEADER = "x-plaudit-live-viewer";

/**
 * A socket's attachment: its items, packed (shared/live.ts), and its viewer.
 * An anonymous socket's is the packed string alone, as every socket's was
 * before viewers were kept, so sockets open across a deploy keep their items.
 * WARNING: changing this form strands the viewers of sockets open across a deploy.
 */
type Packed = string | { i: string; u: string | null; g: string; x: number };

export function packAttachment(items: Iterable<string>, viewer: LiveViewer): Packed {
  const packed = packItems(items);
  if (viewer.userId === null) return packed;
  return { i: packed, u: viewer.userId, g: viewer.followersOf.map((owner) => BigInt(owner).toString(36)).join(","), x: viewer.grantUntil };
}

export function unpackAttachment(attachment: unknown): { items: string[]; viewer: LiveViewer } {
  if (typeof attachment !== "object" || attachment === null) return { items: unpackItems(attachment), viewer: ANONYMOUS_LIVE };
  const { i, u, g, x } = attachment as Exclude<Packed, string>;
  const followersOf = g === "" ? [] : g.split(",").map((token) => [...token].reduce((n, c) => n * 36n + BigInt(parseInt(c, 36)), 0n).toString());
  return { items: unpackItems(i), viewer: { userId: u, followersOf, grantUntil: x } };
}

/** The viewer the privacy rules see at `now`: a grant past its time names nobody. */
export function viewerAt(viewer: LiveViewer, now: number): Viewer {
  if (viewer.userId === null) return ANONYMOUS;
  return { userId: viewer.userId, followersOf: new Set(now < viewer.grantUntil ? viewer.followersOf : []) };
}
