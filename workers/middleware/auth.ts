import { createMiddleware } from "hono/factory";
import { isCanonicalU64 } from "../../shared/ids";
import { verifyJwt } from "../../shared/jwt";
import { ApiError, unauthorized } from "../lib/errors";
import type { AppEnv, Principal } from "../types";

function secrets(env: Env): string[] {
  return (env.AUTH_SECRET ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

async function authenticate(header: string | undefined, env: Env): Promise<Principal> {
  const match = header?.match(/^Bearer ([^\s]+)$/);
  if (!match) throw unauthorized("An Authorization: Bearer <token> header is required.");
  const keys = secrets(env);
  if (keys.length === 0) throw new ApiError(503, "unavailable", "Authentication is not configured.", { retryAfter: 60 });
  const result = await verifyJwt(match[1]!, keys, Math.floor(Date.now() / 1000));
  if (!result.ok) throw unauthorized(`The bearer token is not accepted: ${result.reason}.`);
  const { sub, role } = result.claims;
  if (typeof sub !== "string" || !isCanonicalU64(sub)) {
    throw unauthorized("The bearer token's sub must be a canonical unsigned 64-bit user id.");
  }
  return { userId: sub, role: role === "service" ? "service" : "user" };
}

/** Any valid token: the user is the token's `sub`, never a body or query field. */
export const requireUser = createMiddleware<AppEnv>(async (c, next) => {
  c.set("principal", await authenticate(c.req.header("authorization"), c.env));
  await next();
});

/** A valid token with `role: "service"`: operators and trusted back ends. */
export const requireService = createMiddleware<AppEnv>(async (c, next) => {
  const principal = await authenticate(c.req.header("authorization"), c.env);
  if (principal.role !== "service") throw new ApiError(403, "forbidden", "This endpoint needs a service token.");
  c.set("principal", principal);
  await next();
});
