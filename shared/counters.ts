import { z } from "zod";

/** Kinds of items that can be counted; part of every item key. */
export const ITEM_TYPES = ["post", "reel", "comment"] as const;
export const ItemType = z.enum(ITEM_TYPES, {
  error: `must be one of ${ITEM_TYPES.join(", ")}`,
});
export type ItemType = z.infer<typeof ItemType>;

/**
 * Toggles are per-user, exactly deduplicated states (a user likes an item or
 * does not); events are plain counts.
 */
export const TOGGLE_COUNTERS = ["likes", "saves"] as const;
export const EVENT_COUNTERS = ["views", "shares"] as const;
export const COUNTER_TYPES = [...TOGGLE_COUNTERS, ...EVENT_COUNTERS] as const;

export type ToggleCounter = (typeof TOGGLE_COUNTERS)[number];
export type EventCounter = (typeof EVENT_COUNTERS)[number];
export type CounterType = (typeof COUNTER_TYPES)[number];

export const CounterTypeSchema = z.enum(COUNTER_TYPES, {
  error: `must be one of ${COUNTER_TYPES.join(", ")}`,
});

export type Counts = Record<CounterType, number>;

export function zeroCounts(): Counts {
  return { likes: 0, views: 0, shares: 0, saves: 0 };
}

/**
 * An item's key: its type and id. `post:7` and `reel:7` are different items,
 * and the key is the name of the item's Durable Object.
 */
export function itemKey(type: ItemType, id: string): string {
  return `${type}:${id}`;
}
