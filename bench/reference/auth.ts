// What every reference Worker does before it answers: plaudit's own HS256
// check of a bearer token, when the request carries one.
import { verifyJwt } from "../../shared/jwt";

/** The token's user; "" when the request has no token; null when the token is bad. */
export async function bearerUser(request: Request, secret: string): Promise<string | null> {
  const header = request.headers.get("authorization");
  if (!header) return "";
  const result = await verifyJwt(header.replace(/^Bearer /, ""), [secret], Math.floor(Date.now() / 1000));
  return result.ok && typeof result.claims.sub === "string" ? result.claims.sub : null;
}

export const answer = (body: unknown, status = 200) => Response.json(body, { status });
