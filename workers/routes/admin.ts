import { Hono } from "hono";
import { AdminUserParams } from "../../shared/schemas";
import { withRetries } from "../../shared/retries";
import { userLikes } from "../lib/objects";
import { invalid } from "../lib/errors";
import { requireService } from "../middleware/auth";
import type { AppEnv } from "../types";

export const admin = new Hono<AppEnv>();

/** Operators' view of one user's object: changes the item side has not yet acknowledged. */
admin.get("/v1/admin/users/:user_id", requireService, async (c) => {
  const parsed = AdminUserParams.safeParse(c.req.param());
  if (!parsed.success) throw invalid("The user id is invalid.", [{ path: "user_id", message: parsed.error.issues[0]!.message }]);
  const { user_id } = parsed.data;
  const pending = await withRetries(async () => await userLikes(c.env, user_id).pendingDeliveries());
  return c.json({ user_id, pending_deliveries: pending });
});
