import { Hono } from "hono";
import type { ItemType } from "../../shared/counters";
import { canSee } from "../../shared/privacy";
import { splitItem } from "../stores/item-key";
import { encodeCursor, OwnLikesQuery, type OwnLikesPosition, type OwnLikesResponse } from "../../shared/own-likes";
import { withRetries } from "../../shared/retries";
import { userLikes } from "../lib/objects";
import { drainNow, pendingLikes, withPendingLikes, type Pending } from "../likes/pending-reads";
import { readQuery } from "../lib/validation";
import { routeLabel } from "../metrics/route-label";
import { requireUser } from "../middleware/auth";
import { identifyViewer } from "../middleware/viewer";
import { readSettings } from "../privacy/item-settings";
import type { AppEnv } from "../types";

export const ownLikesRoute = new Hono<AppEnv>();

/** Pages read from the object at most for one answer, so a list whose likes are nearly all out of sight still answers promptly. */
const MAX_ROUNDS = 5;

/**
 * The caller's own likes, newest first, from their object. The rule of
 * `has_liked` applies (docs/privacy.md, "A like out of sight"): a like of an
 * item the caller may no longer see is left out, as a like never made, and
 * shows again once they may see it; the page is filled from further rows.
 * One row more than the page is read to know whether another page follows.
 * Likes and unlikes still pending (202) are laid over it (read-your-writes).
 */
ownLikesRoute.get("/v1/me/likes", requireUser, identifyViewer, async (c) => {
  const { item_type, limit, cursor } = readQuery(c, OwnLikesQuery);
  const { userId } = c.get("principal");
  const viewer = c.get("viewer");
  const pendingRead = pendingLikes(c, userId);
  const likes: OwnLikesPosition[] = [];
  let after = cursor ?? null;
  let more = true;
  for (let round = 0; round < MAX_ROUNDS && more && likes.length < limit; round++) {
    const rows = await withRetries(() =>
      userLikes(c.env, userId, routeLabel(c)).ownLikes({ itemType: item_type ?? null, limit: limit + 1, after }),
    );
    const page = rows.slice(0, limit);
    more = rows.length > limit;
    const settings = await readSettings(c.env, [...new Set(page.map(({ item }) => item))], routeLabel(c));
    for (const [i, row] of page.entries()) {
      after = row;
      if (canSee(settings.get(row.item)!, viewer)) likes.push(row);
      if (likes.length === limit) {
        more ||= i < page.length - 1;
        break;
      }
    }
  }
  const pending = await pendingRead;
  drainNow(c, userId, pending);
  // A pending like of an item out of sight is left out too, as has_liked answers it.
  const pendingSettings = await readSettings(c.env, [...pending.keys()], routeLabel(c));
  const pendingInSight: Pending = new Map([...pending].filter(([item]) => canSee(pendingSettings.get(item)!, viewer)));
  const shown = likes.map(({ item, at }) => {
    const [type, id] = splitItem(item);
    return { item_id: id, item_type: type as ItemType, liked_at: at > 0 ? new Date(at).toISOString() : null };
  });
  return c.json<OwnLikesResponse>({
    likes: withPendingLikes(shown, pendingInSight, item_type ?? null, !cursor),
    next_cursor: more && after ? encodeCursor(after) : null,
  });
});
