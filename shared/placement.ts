import { fnv1a } from "./hash";

/** Where an item takes new edges: its head alone, or its N children. */
export type Placement = { hot: boolean; shards: number };

/** An edge's home: the item's head, or child i (0 to N-1). */
export const HEAD = -1;

/**
 * The child that holds a user's edges on a hot item: FNV-1a of the user id,
 * modulo the item's N.
 * WARNING: never change this function, nor an item's N once chosen: together
 * they say which child holds which user's edge, and a user who landed on
 * another child would be counted twice.
 */
export function childFor(userId: string, shards: number): number {
  return fnv1a(userId) % shards;
}

/** The home a new edge gets under a placement. */
export function homeFor(userId: string, placement: Placement): number {
  return placement.hot && placement.shards > 0 ? childFor(userId, placement.shards) : HEAD;
}
