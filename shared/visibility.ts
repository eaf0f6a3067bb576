/** Who reads: a user id from a token, or null for an anonymous reader. */
export type Viewer = string | null;

/** What a viewer may see of one item: the item at all, and its counts. */
export type Visibility = { item: boolean; counts: boolean };

/**
 * The one place that decides what a viewer may see of an item. Live
 * subscriptions, history and unique viewers ask here before they answer.
 *
 * Item privacy (items a viewer may not see, counts an owner hid) is not built
 * yet, so today every item and count is visible to everyone. When it lands,
 * an invisible item must read exactly like an item nobody touched (zeros, no
 * history), and a hidden count as null, so a read gives no hint.
 */
export function visibility(_viewer: Viewer, _item: string): Visibility {
  return { item: true, counts: true };
}
