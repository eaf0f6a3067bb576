import { createMiddleware } from "hono/factory";
import { ANONYMOUS } from "../../shared/privacy";
import { unauthorized } from "../lib/errors";
import { GRANT_HEADER, verifyGrant } from "../privacy/grant";
import type { AppEnv, Principal } from "../types";

/**
 * Who is asking, for the per-item checks of docs/privacy.md: the token's user
 * (none on a public read without a token) and the owners the host app's grant
 * names. Runs after the auth middleware of the route.
 */
export const identifyViewer = createMiddleware<AppEnv>(async (c, next) => {
  const principal = c.get("principal") as Principal | undefined;
  const grant = c.req.header(GRANT_HEADER);
  if (!principal) {
    if (grant) throw unauthorized(`An ${GRANT_HEADER} header needs the Authorization: Bearer token of the user it names.`);
    c.set("viewer", ANONYMOUS);
  } else {
    const followersOf = grant ? (await verifyGrant(grant, c.env, principal.userId, Date.now())).owners : ANONYMOUS.followersOf;
    c.set("viewer", { userId: principal.userId, followersOf });
  }
  await next();
});
