import { Hono, type Context } from "hono";
import type { ItemDescription } from "../../shared/contracts";
import { config } from "../../shared/config";
import { itemKey, type ItemType } from "../../shared/counters";
import { withRetries } from "../../shared/retries";
import { AdminItemParams, AdminUserParams } from "../../shared/schemas";
import { itemCounter, userLikes } from "../lib/objects";
import { readParams } from "../lib/validation";
import { limitsView } from "../limits/tiers";
import { requireService } from "../middleware/auth";
import type { AppEnv } from "../types";
import { routeLabel } from "../metrics/route-label";

export const admin = new Hono<AppEnv>();

/** Operators' view of one user: edges whose newest change the item side has not yet acknowledged, and the limits that can apply and why. */
admin.get("/v1/admin/users/:user_id", requireService, async (c) => {
  const { user_id } = readParams(c, AdminUserParams);
  const pending = await withRetries(async () => await userLikes(c.env, user_id, routeLabel(c)).pendingDeliveries());
  return c.json({ user_id, pending_deliveries: pending, limits: limitsView(config(c.env)) });
});

/** Operators' view of one item: counts, whether it is hot, its children's last reports, its write rate. */
admin.get("/v1/admin/items/:item_type/:item_id", requireService, async (c) => {
  const { item_type, item_id } = readParams(c, AdminItemParams);
  return c.json({ item_id, item_type, ...(await describeItem(c, item_type, item_id)) });
});

/** The host app expects the item to be hot: it is split now, before its likes come. */
admin.post("/v1/admin/items/:item_type/:item_id/hot", requireService, async (c) => {
  const { item_type, item_id } = readParams(c, AdminItemParams);
  // Splitting twice changes nothing, so a retry is safe.
  await withRetries(async () => await itemCounter(c.env, itemKey(item_type, item_id), routeLabel(c)).expectHot());
  return c.json({ item_id, item_type, ...(await describeItem(c, item_type, item_id)) });
});

async function describeItem(c: Context<AppEnv>, itemType: ItemType, itemId: string): Promise<ItemDescription> {
  return await withRetries(async () => await itemCounter(c.env, itemKey(itemType, itemId), routeLabel(c)).describe());
}
