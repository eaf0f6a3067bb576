import { Hono } from "hono";
import { PurgeBody, removalResponse } from "../../shared/removal";
import { withRetries } from "../../shared/retries";
import { AdminUserParams } from "../../shared/schemas";
import { ApiError, unavailable } from "../lib/errors";
import { userLikes } from "../lib/objects";
import { readJson, readParams } from "../lib/validation";
import { routeLabel } from "../metrics/route-label";
import { requireService } from "../middleware/auth";
import { settleAll } from "../../shared/settle";
import type { AppEnv } from "../types";

export const removal = new Hono<AppEnv>();

/** Users' objects asked at once by a purge. */
const PURGE_CONCURRENCY = 20;

const statusPath = (user: string) => `/v1/admin/users/${user}/removal`;

/**
 * Deletes an account's likes and saves (docs/privacy.md, "Removing a user"):
 * each is undone through the unlike path, so every count goes down once, and
 * then every edge row of the user is wiped. Runs in the background from the
 * user's object; answered at once with where it stands. Idempotent.
 */
removal.delete("/v1/admin/users/:user_id", requireService, async (c) => {
  const { user_id } = readParams(c, AdminUserParams);
  const state = await withRetries(async () => await userLikes(c.env, user_id, routeLabel(c)).removeUser(user_id, "delete"));
  c.header("location", statusPath(user_id));
  return c.json(removalResponse(user_id, state));
});

/** Where a user's deletion or purge stands. */
removal.get("/v1/admin/users/:user_id/removal", requireService, async (c) => {
  const { user_id } = readParams(c, AdminUserParams);
  return c.json(removalResponse(user_id, await withRetries(async () => await userLikes(c.env, user_id, routeLabel(c)).removal())));
});

/**
 * Purges fake accounts: their likes and saves are undone as a deletion's
 * are, and the accounts are barred from liking and saving until the host
 * app lifts it. Answers each account's removal as it stands; 503 names none
 * if any account's object could not be reached (asking again is safe).
 */
removal.post("/v1/admin/purge", requireService, async (c) => {
  const { user_ids } = await readJson(c, PurgeBody);
  const users = [...new Set(user_ids)];
  const results = await settleAll(users, PURGE_CONCURRENCY, (user) => withRetries(async () => await userLikes(c.env, user, routeLabel(c)).removeUser(user, "purge")));
  if (results.some((result) => result.status === "rejected")) throw unavailable("Some accounts could not be reached; purging them again is safe.");
  return c.json({ purged: results.map((result, i) => removalResponse(users[i]!, result.status === "fulfilled" ? result.value : null)) });
});

/** Lifts a purge's bar (again: the same answer); 409 for a deleted account (it stays barred) and for one never purged. */
removal.delete("/v1/admin/users/:user_id/bar", requireService, async (c) => {
  const { user_id } = readParams(c, AdminUserParams);
  const user = userLikes(c.env, user_id, routeLabel(c));
  if (!(await withRetries(async () => await user.liftBar()))) throw new ApiError(409, "not_purged", "Only a purged account's bar can be lifted.");
  return c.json(removalResponse(user_id, await withRetries(async () => await user.removal())));
});
