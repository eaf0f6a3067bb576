import { Hono } from "hono";
import type { ItemType } from "../../shared/counters";
import { splitItem } from "../stores/item-key";
import { encodeCursor, OwnLikesQuery, type OwnLikesResponse } from "../../shared/own-likes";
import { withRetries } from "../../shared/retries";
import { userLikes } from "../lib/objects";
import { readQuery } from "../lib/validation";
import { routeLabel } from "../metrics/route-label";
import { requireUser } from "../middleware/auth";
import type { AppEnv } from "../types";

export const ownLikesRoute = new Hono<AppEnv>();

/**
 * The caller's own likes, newest first, from their object: exact and their
 * own, so no privacy filter applies (a user always sees what they liked).
 * One row more than the page is read to know whether another page follows.
 */
ownLikesRoute.get("/v1/me/likes", requireUser, async (c) => {
  const { item_type, limit, cursor } = readQuery(c, OwnLikesQuery);
  const { userId } = c.get("principal");
  const rows = await withRetries(() =>
    userLikes(c.env, userId, routeLabel(c)).ownLikes({ itemType: item_type ?? null, limit: limit + 1, after: cursor ?? null }),
  );
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return c.json<OwnLikesResponse>({
    likes: page.map(({ item, at }) => {
      const [type, id] = splitItem(item);
      return { item_id: id, item_type: type as ItemType, liked_at: at > 0 ? new Date(at).toISOString() : null };
    }),
    next_cursor: rows.length > limit && last ? encodeCursor(last) : null,
  });
});
