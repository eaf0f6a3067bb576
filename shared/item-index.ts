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
