// What every reference Worker does before it answers: the HS256 check of a
// bearer token that plaudit makes (jose, as workers/auth/verify.ts does), when
// the request carries one, and no check again of a token that held within the
// last minute (plaudit's verified-token cache, the same bound and age), so
// the comparison leaves out what neither side does.
import { jwtVerify } from "jose";

const VERIFIED_FOR_MS = 60_000;
const VERIFIED_TOKENS = 1_000;
const VERIFIED_TOKEN_MAX_CHARS = 2_048;
const verified = new Map<string, { sub: string; exp: number; at: number }>();

/** The token's user; "" when the request has no token; null when the token is bad. */
export async function bearerUser(request: Request, secret: string): Promise<string | null> {
  const header = request.headers.get("authorization");
  if (!header) return "";
  const token = header.replace(/^Bearer /, "");
  const now = Date.now();
  const known = token.length <= VERIFIED_TOKEN_MAX_CHARS ? verified.get(token) : undefined;
  if (known && now - known.at < VERIFIED_FOR_MS) return known.exp > now / 1000 ? known.sub : null;
  try {
    const { payload } = await jwtVerify(token, new TextEncoder().encode(secret), { algorithms: ["HS256"], requiredClaims: ["exp"] });
    if (typeof payload.sub !== "string") return null;
    if (token.length > VERIFIED_TOKEN_MAX_CHARS) return payload.sub;
    verified.delete(token);
    verified.set(token, { sub: payload.sub, exp: payload.exp!, at: now });
    if (verified.size > VERIFIED_TOKENS) verified.delete(verified.keys().next().value!);
    return payload.sub;
  } catch {
    return null;
  }
}

export const answer = (body: unknown, status = 200) => Response.json(body, { status });
