// What every reference Worker does before it answers: the HS256 check of a
// bearer token that plaudit makes (jose, as workers/auth/verify.ts does), when
// the request carries one.
import { jwtVerify } from "jose";

/** The token's user; "" when the request has no token; null when the token is bad. */
export async function bearerUser(request: Request, secret: string): Promise<string | null> {
  const header = request.headers.get("authorization");
  if (!header) return "";
  try {
    const { payload } = await jwtVerify(header.replace(/^Bearer /, ""), new TextEncoder().encode(secret), {
      algorithms: ["HS256"],
      requiredClaims: ["exp"],
    });
    return typeof payload.sub === "string" ? payload.sub : null;
  } catch {
    return null;
  }
}

export const answer = (body: unknown, status = 200) => Response.json(body, { status });
