import { Hono } from "hono";
import { itemKey } from "../../shared/counters";
import { encodeLikersCursor, LikersQuery, type LikersPosition, type LikersResponse } from "../../shared/likers";
import { disclosure } from "../../shared/privacy";
import { unavailable } from "../lib/errors";
import { readQuery } from "../lib/validation";
import { requireUser } from "../middleware/auth";
import { identifyViewer } from "../middleware/viewer";
import { centralStore } from "../stores/central-tables";
import { hiddenLikers } from "../privacy/blocks";
import { readSettings } from "../privacy/item-settings";
import { routeLabel } from "../metrics/route-label";
import type { AppEnv } from "../types";

export const likersRoute = new Hono<AppEnv>();

/** Store pages read at most for one answer, so a list whose likers are nearly all filtered out still answers promptly. */
const MAX_ROUNDS = 5;

/**
 * Who liked an item, newest first, from the central store's time-ordered
 * item-to-likers table (docs/privacy.md, "Who liked this"). An item the viewer
 * may not see, or whose counts are hidden from them (a list would count
 * them), has no likers, as an item nobody touched, and fails as one does when
 * the store is away. Likers the owner blocks,
 * and likers who block the viewer or whom the viewer blocks, are left out,
 * and the page is filled up to `limit` from further store pages.
 */
likersRoute.get("/v1/likers", requireUser, identifyViewer, async (c) => {
  const { item_id, item_type, limit, cursor } = readQuery(c, LikersQuery);
  const key = itemKey(item_type, item_id);
  const viewer = c.get("viewer");
  const settings = (await readSettings(c.env, [key], routeLabel(c))).get(key)!;
  const central = await centralStore(c.env).catch(() => null);
  if (!central) throw unavailable("The likers list is read from the central store, which cannot be reached (or is not configured).", 5);
  // The store is read whoever asks, so an item without a list for this viewer fails with the store as an untouched item does.
  if (disclosure(settings, viewer) !== "counts") {
    await central.likersPage(key, "likes", cursor ?? null, limit);
    return c.json<LikersResponse>({ likers: [], next_cursor: null });
  }

  const likers: LikersPosition[] = [];
  let after: LikersPosition | null = cursor ?? null;
  let more = true;
  for (let round = 0; round < MAX_ROUNDS && more && likers.length < limit; round++) {
    const page = await central.likersPage(key, "likes", after, limit);
    const hidden = await hiddenLikers(c.env, settings.owner, viewer.userId!, page.likers.map(({ user }) => user), routeLabel(c));
    more = page.more;
    for (const [i, liker] of page.likers.entries()) {
      after = liker;
      if (!hidden.has(liker.user)) likers.push(liker);
      if (likers.length === limit) {
        more ||= i < page.likers.length - 1;
        break;
      }
    }
  }
  return c.json<LikersResponse>({
    likers: likers.map(({ user, at }) => ({ user_id: user, liked_at: new Date(at).toISOString() })),
    next_cursor: more && after ? encodeLikersCursor(after) : null,
  });
});
