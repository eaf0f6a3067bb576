import { Hono } from "hono";
import { itemKey } from "../../shared/counters";
import { canSee } from "../../shared/privacy";
import { HasLikedRequest } from "../../shared/schemas";
import { withRetries } from "../../shared/retries";
import { userLikes } from "../lib/objects";
import { drainNow, pendingLikes } from "../likes/pending-reads";
import { readJson } from "../lib/validation";
import { requireUser } from "../middleware/auth";
import { identifyViewer } from "../middleware/viewer";
import { readSettings } from "../privacy/item-settings";
import type { AppEnv } from "../types";
import { routeLabel } from "../metrics/route-label";

export const hasLiked = new Hono<AppEnv>();

/**
 * Which of these items the caller likes; exact, from the caller's own object.
 * An item the caller may not see answers false, as one they never liked. The
 * items' settings (isolate cache, else one D1 query) and the caller's
 * pending intents (one indexed D1 query, read-your-writes after a 202) are
 * read alongside.
 */
hasLiked.post("/v1/has_liked", requireUser, identifyViewer, async (c) => {
  const { item_ids, item_type } = await readJson(c, HasLikedRequest);
  const ids = [...new Set(item_ids)];
  const keys = ids.map((id) => itemKey(item_type, id));
  const { userId } = c.get("principal");
  const [byKey, settings, pending] = await Promise.all([
    withRetries(() => userLikes(c.env, userId, routeLabel(c)).hasLiked(keys, "likes")),
    readSettings(c.env, keys),
    pendingLikes(c, userId),
  ]);
  drainNow(c, userId, pending);
  const viewer = c.get("viewer");
  const liked = (key: string) => (pending.get(key)?.on ?? byKey[key] ?? false) && canSee(settings.get(key)!, viewer);
  const pendingIds = ids.filter((id) => pending.has(itemKey(item_type, id)));
  return c.json({
    liked: Object.fromEntries(ids.map((id) => [id, liked(itemKey(item_type, id))])),
    ...(pendingIds.length > 0 ? { pending: pendingIds } : {}),
  });
});
