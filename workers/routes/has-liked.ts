import { Hono } from "hono";
import { itemKey } from "../../shared/counters";
import { HasLikedRequest } from "../../shared/schemas";
import { withRetries } from "../../shared/retries";
import { userLikes } from "../lib/objects";
import { readJson } from "../lib/validation";
import { requireUser } from "../middleware/auth";
import type { AppEnv } from "../types";
import { routeLabel } from "../metrics/route-label";

export const hasLiked = new Hono<AppEnv>();

/** Which of these items the caller likes; exact, from the caller's own object. */
hasLiked.post("/v1/has_liked", requireUser, async (c) => {
  const { item_ids, item_type } = await readJson(c, HasLikedRequest);
  const ids = [...new Set(item_ids)];
  const { userId } = c.get("principal");
  const byKey = await withRetries(() =>
    userLikes(c.env, userId, routeLabel(c)).hasLiked(
      ids.map((id) => itemKey(item_type, id)),
      "likes",
    ),
  );
  return c.json({ liked: Object.fromEntries(ids.map((id) => [id, byKey[itemKey(item_type, id)] ?? false])) });
});
