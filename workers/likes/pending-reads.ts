import type { Context } from "hono";
import type { ItemType } from "../../shared/counters";
import { log } from "../../shared/log";
import type { OwnLikesResponse } from "../../shared/own-likes";
import type { AppEnv } from "../types";
import { drainUser, pendingOf } from "./intents";
import { splitItem } from "../stores/item-key";

export type Pending = Map<string, { on: boolean; askedAt: number }>;

/**
 * Read-your-writes for a user whose like or unlike was accepted as pending
 * (202): the user's latest pending intent per item, read beside the object's
 * answer. A failed read serves the object's answer alone (the intent shows
 * once applied). When there are some and the object has just answered, the
 * user's drain runs now rather than on its next retry.
 */
export async function pendingLikes(c: Context<AppEnv>, user: string): Promise<Pending> {
  const pending = await pendingOf(c.env, user, "likes").catch((error: unknown): Pending => {
    log("warn", "pending_intents_unread", { error: String(error) });
    return new Map();
  });
  return pending;
}

/** Called once the user's object answered: it is reachable, so its pending intents can be applied now. */
export function drainNow(c: Context<AppEnv>, user: string, pending: Pending): void {
  if (pending.size === 0) return;
  c.executionCtx.waitUntil(drainUser(c.env, user).catch((error: unknown) => log("warn", "intents_drain_failed", { error: String(error) })));
}

type OwnLikes = OwnLikesResponse["likes"];

/**
 * The first page of /v1/me/likes with the pending intents laid over it: the
 * likes still pending first, newest first, marked `pending`, and no item
 * whose latest pending intent is an unlike.
 */
export function withPendingLikes(likes: OwnLikes, pending: Pending, itemType: ItemType | null, firstPage: boolean): OwnLikes {
  if (pending.size === 0) return likes;
  const key = (like: OwnLikes[number]) => `${like.item_type}:${like.item_id}`;
  const kept = likes.filter((like) => !pending.has(key(like)));
  if (!firstPage) return kept;
  const added = [...pending]
    .filter(([, intent]) => intent.on)
    .sort((a, b) => b[1].askedAt - a[1].askedAt)
    .map(([item, intent]) => {
      const [type, id] = splitItem(item);
      return { item_id: id, item_type: type as ItemType, liked_at: new Date(intent.askedAt).toISOString(), pending: true as const };
    })
    .filter((like) => itemType === null || like.item_type === itemType);
  return [...added, ...kept];
}
