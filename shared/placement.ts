import { fnv1a } from "./hash";

/** Where an item takes new edges: its head alone, or its N children. */
export type Placement = { hot: boolean; shards: number };

/** An edge's home: the item's head, or child i (0 to N-1). */
export const HEAD = -1;

/**
 * The child that takes a user's new edge on a hot item: FNV-1a of the user
 * id, modulo the item's N.
 * WARNING: never change this function, and never use it to find an existing
 * edge: an edge lives at its recorded home (the user object's `home`, the
 * head's `moved`), chosen once under the N of its day. That is what lets an
 * item's N grow: new edges use the wider map, existing ones stay put, and a
 * user sent to another child than the one holding their edge would be
 * counted twice.
 */
export function childFor(userId: string, shards: number): number {
  return fnv1a(userId) % shards;
}

/** The home a new edge gets under a placement. */
export function homeFor(userId: string, placement: Placement): number {
  return placement.hot && placement.shards > 0 ? childFor(userId, placement.shards) : HEAD;
}
