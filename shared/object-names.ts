/**
 * How users and items map to their Durable Objects.
 * WARNING: never change these names. An object's name is its identity: a new
 * spelling would give every user and item a second, empty object, and likes
 * would count twice.
 */
export function userObjectName(userId: string): string {
  return `u:${userId}`;
}

/** The item's head object is named by its key, `post:123`. */
export function itemObjectName(itemKey: string): string {
  return itemKey;
}

/**
 * A hot item's child number `index` (0 to N-1).
 * WARNING: never change: a child's name is where the edges it holds live.
 */
export function shardObjectName(itemKey: string, index: number): string {
  return `${itemKey}#${index}`;
}
