import { z } from "zod";
import { ITEM_TYPES, itemKey, type Counts } from "./counters";
import type { ItemSettings } from "./privacy";
import { ItemRef, MAX_BATCH_ITEMS } from "./schemas";

/** Most items one live socket may watch at once. */
export const MAX_LIVE_ITEMS = MAX_BATCH_ITEMS;
/** A client frame is held to the API's body limit: 100 items fit in well under a third of it. */
export const MAX_LIVE_FRAME_BYTES = 16 * 1024;

/** What a client sends on a live socket (text frames, JSON). A bare `ping` is answered `pong` without waking anything. */
export const LiveClientMessage = z.discriminatedUnion("type", [
  z.object({ type: z.literal("subscribe"), items: z.array(ItemRef).min(1).max(MAX_LIVE_ITEMS) }),
  z.object({ type: z.literal("unsubscribe"), items: z.array(ItemRef).min(1).max(MAX_LIVE_ITEMS) }),
]);
export type LiveClientMessage = z.infer<typeof LiveClientMessage>;

const Count = z.number().int().nonnegative().nullable().meta({ description: "null when the item's owner hides its counts from this socket's viewer" });
const LiveCounts = z.object({ likes: Count, views: Count, shares: Count, saves: Count });

/** What the server sends: the socket's subscriptions after each change, counts as they move, or an error. */
export const LiveServerMessage = z.discriminatedUnion("type", [
  z.object({ type: z.literal("subscribed"), items: z.array(z.string()).meta({ description: "Item keys the socket watches now" }) }),
  z.object({
    type: z.literal("counts"),
    counts: z.record(z.string(), LiveCounts).meta({ description: "The items that changed since the last message, by item key" }),
    as_of: z.iso.datetime(),
  }),
  z.object({
    type: z.literal("error"),
    error: z.string(),
    message: z.string(),
    details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  }),
]);
export type LiveServerMessage = z.infer<typeof LiveServerMessage>;

/** One item's new counts on their way from the aggregator to the hubs, with the item's settings for the hub's privacy check. */
export type LiveUpdate = { item: string; seq: number; counts: Counts; settings: ItemSettings };

export const liveKeys = (items: readonly ItemRef[]) => [...new Set(items.map((i) => itemKey(i.item_type, i.item_id)))];

/*
 * A socket's subscriptions are kept in its hibernation attachment, which
 * holds at most 2,048 bytes. Item keys are packed as the type's initial and
 * the id in base 36 (at most 1 + 13 characters), comma-separated: 100 items
 * take at most 1,499 bytes. WARNING: changing this packing strands the
 * subscriptions of sockets open across a deploy.
 */
const TYPE_BY_INITIAL = new Map(ITEM_TYPES.map((t) => [t[0]!, t]));

export function packItems(items: Iterable<string>): string {
  return [...items]
    .map((key) => {
      const colon = key.indexOf(":");
      return key[0]! + BigInt(key.slice(colon + 1)).toString(36);
    })
    .join(",");
}

export function unpackItems(packed: unknown): string[] {
  if (typeof packed !== "string" || packed === "") return [];
  return packed.split(",").flatMap((token) => {
    const type = TYPE_BY_INITIAL.get(token[0]!);
    if (!type || !/^[0-9a-z]+$/.test(token.slice(1))) return [];
    return [`${type}:${[...token.slice(1)].reduce((n, c) => n * 36n + BigInt(parseInt(c, 36)), 0n)}`];
  });
}
