import { config } from "../../shared/config";
import { isCanonicalU64 } from "../../shared/ids";
import { claimAt } from "../auth/claims";
import { verifyToken } from "../auth/verify";
import { ApiError, unauthorized } from "../lib/errors";

/** The request header carrying the host app's grant. */
export const GRANT_HEADER = "x-plaudit-grant";

/** The grant's claim listing the owners whose followers-only items its user may see. */
export const GRANT_CLAIM = "followers_of";

/** Most owners one grant may name: a grant is about one page of a feed, not a whole follow list. */
export const MAX_GRANT_OWNERS = 1000;

const refuse = (why: string) => unauthorized(`The ${GRANT_HEADER} header is not accepted: ${why}.`);

/**
 * Checks a grant the host app signed for this request's user (docs/privacy.md):
 * the same keys and checks as a bearer token, the same user, a short life
 * (GRANT_MAX_SECONDS, so an unfollow takes effect within it) and a list of
 * canonical owner ids. Returns the owners it names and when it expires (ms).
 */
export async function verifyGrant(grant: string, env: Env, userId: string, nowMs: number): Promise<{ owners: Set<string>; expiresAt: number }> {
  const settings = config(env);
  let claims;
  try {
    ({ claims } = await verifyToken(grant, env, nowMs));
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) throw refuse("its signature, times or form are invalid");
    throw error;
  }
  if (claimAt(claims, settings.AUTH_USER_CLAIM) !== userId) throw refuse("it names another user than the bearer token");
  if ((claims.exp ?? Infinity) * 1000 - nowMs > (settings.GRANT_MAX_SECONDS + settings.AUTH_CLOCK_SKEW_SECONDS) * 1000) {
    throw refuse(`it must expire within GRANT_MAX_SECONDS (${settings.GRANT_MAX_SECONDS} s)`);
  }
  const owners = claims[GRANT_CLAIM];
  if (!Array.isArray(owners) || owners.length > MAX_GRANT_OWNERS || !owners.every((o) => typeof o === "string" && isCanonicalU64(o))) {
    throw refuse(`${GRANT_CLAIM} must be a list of at most ${MAX_GRANT_OWNERS} canonical user ids`);
  }
  return { owners: new Set(owners as string[]), expiresAt: (claims.exp ?? Infinity) * 1000 };
}
