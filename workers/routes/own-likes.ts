import { Hono } from "hono";
import type { ItemType } from "../../shared/counters";
import { splitItem } from "../stores/item-key";
import { encodeCursor, OwnLikesQuery, type OwnLikesResponse } from "../../shared/own-likes";
import { withRetries } from "../../shared/retries";
import { userLikes } from "../lib/objects";
import { drainNow, pendingLikes, withPendingLikes } from "../likes/pending-reads";
import { readQuery } from "../lib/validation";
import { routeLabel } from "../metrics/route-label";
import { requireUser } from "../middleware/auth";
import type { AppEnv } from "../types";

export const ownLikesRoute = new Hono<AppEnv>();

/**
 * The caller's own likes, newest first, from their object: exact and their
 * own, so no privacy filter applies (a user always sees what they liked).
 * One row more than the page is read to know whether another page follows.
 * Likes and unlikes still pending (202) are laid over it (read-your-writes).
 */
ownLikesRoute.get("/v1/me/likes", requireUser, async (c) => {
  const { item_type, limit, cursor } = readQuery(c, OwnLikesQuery);
  const { userId } = c.get("principal");
  const [rows, pending] = await Promise.all([
    withRetries(() => userLikes(c.env, userId, routeLabel(c)).ownLikes({ itemType: item_type ?? null, limit: limit + 1, after: cursor ?? null })),
    pendingLikes(c, userId),
  ]);
  drainNow(c, userId, pending);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const likes = page.map(({ item, at }) => {
    const [type, id] = splitItem(item);
    return { item_id: id, item_type: type as ItemType, liked_at: at > 0 ? new Date(at).toISOString() : null };
  });
  return c.json<OwnLikesResponse>({
    likes: withPendingLikes(likes, pending, item_type ?? null, !cursor),
    next_cursor: rows.length > limit && last ? encodeCursor(last) : null,
  });
});
