// What every reference Worker does before it answers: the HS256 check of a
// bearer token that plaudit makes (jose, as workers/auth/verify.ts does), when
// the request carries one, and no check again of a token that held within the
// last minute: plaudit's verified-token cache, with its bounds and age, so
// the comparison leaves out what neither side does.
import { jwtVerify } from "jose";
import { VERIFIED_FOR_MS, VERIFIED_TOKEN_MAX_CHARS, VERIFIED_TOKENS } from "../../workers/auth/remembered-tokens";
import { TtlCache } from "../../workers/lib/ttl-cache";

const verified = new TtlCache<{ sub: string; exp: number; at: number }>(VERIFIED_TOKENS);

/** The token's user; "" when the request has no token; null when the token is bad. */
export async function bearerUser(request: Request, secret: string): Promise<string | null> {
  const header = request.headers.get("authorization");
  if (!header) return "";
  const token = header.replace(/^Bearer /, "");
  const now = Date.now();
  const remember = token.length <= VERIFIED_TOKEN_MAX_CHARS;
  const known = remember ? verified.get(token, now) : undefined;
  if (known && known.at <= now) return known.exp > now / 1000 ? known.sub : null;
  try {
    const { payload } = await jwtVerify(token, new TextEncoder().encode(secret), { algorithms: ["HS256"], requiredClaims: ["exp"] });
    if (typeof payload.sub !== "string") return null;
    if (remember) verified.put(token, { sub: payload.sub, exp: payload.exp!, at: now }, VERIFIED_FOR_MS, now);
    return payload.sub;
  } catch {
    return null;
  }
}

export const answer = (body: unknown, status = 200) => Response.json(body, { status });
