import { countDatabaseIndex } from "./count-databases";
import { fnv1a } from "./hash";

/**
 * Which database holds an item's row of the index: the one after the
 * database holding its counts, so losing a count row (or a whole database's
 * rows) never loses the index entry that finds it. With one database, that one.
 */
export function indexDatabaseIndex(item: string, databases: number): number {
  return (countDatabaseIndex(item, databases) + 1) % databases;
}

/**
 * An item's place in the index walk: a hash salted apart from the one that
 * picks its database, so every database's index spreads over the whole range.
 * WARNING: never change it on a live deployment: the walk's cursor is a draw.
 */
export function indexDraw(item: string): number {
  return fnv1a(`index:${item}`);
}

/**
 * A user's place in the walk over the index of users, and so (modulo the
 * number of databases) which database holds its row.
 * WARNING: never change it on a live deployment: rows sit where it says.
 */
export function userIndexDraw(user: string): number {
  return fnv1a(`users:${user}`);
}

/** Draws are 32-bit hashes, spread evenly: a walk's cursor over this is how far it has gone. */
export const DRAW_RANGE = 2 ** 32;
