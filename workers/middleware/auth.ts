import { createMiddleware } from "hono/factory";
import { config } from "../../shared/config";
import { isCanonicalU64 } from "../../shared/ids";
import { claimAt, claimHolds, shortString } from "../auth/claims";
import { verifyBearer } from "../auth/verify";
import { ApiError, unauthorized } from "../lib/errors";
import type { AppEnv, Principal } from "../types";

async function authenticate(header: string | undefined, env: Env): Promise<Principal> {
  const match = header?.match(/^Bearer ([^\s]+)$/);
  if (!match) throw unauthorized("An Authorization: Bearer <token> header is required.");
  const { claims, service } = await verifyBearer(match[1]!, env, Date.now());
  const settings = config(env);
  const userId = claimAt(claims, settings.AUTH_USER_CLAIM);
  if (typeof userId !== "string" || !isCanonicalU64(userId)) {
    throw unauthorized(`The bearer token's ${settings.AUTH_USER_CLAIM} must be a canonical unsigned 64-bit user id.`);
  }
  const device = settings.AUTH_DEVICE_CLAIM ? shortString(claimAt(claims, settings.AUTH_DEVICE_CLAIM)) : undefined;
  const standing = settings.AUTH_STANDING_CLAIM ? shortString(claimAt(claims, settings.AUTH_STANDING_CLAIM)) : undefined;
  return {
    userId,
    role: (service ?? claimHolds(claims, settings.AUTH_SERVICE_CLAIM)) ? "service" : "user",
    ...(device ? { device } : {}),
    ...(standing ? { standing } : {}),
  };
}

/** Any valid token: the user is the token's user claim, never a body or query field. */
export const requireUser = createMiddleware<AppEnv>(async (c, next) => {
  c.set("principal", await authenticate(c.req.header("authorization"), c.env));
  await next();
});

/** Public reads: no token is fine, but a token that is sent must be valid (a read may depend on who asks). */
export const optionalUser = createMiddleware<AppEnv>(async (c, next) => {
  const header = c.req.header("authorization");
  if (header !== undefined) c.set("principal", await authenticate(header, c.env));
  await next();
});

/** A valid service token (by its claim, or by the service key set): operators and trusted back ends. */
export const requireService = createMiddleware<AppEnv>(async (c, next) => {
  const principal = await authenticate(c.req.header("authorization"), c.env);
  if (principal.role !== "service") throw new ApiError(403, "forbidden", "This endpoint needs a service token.");
  c.set("principal", principal);
  await next();
});
