import { SignJWT, type JWTPayload } from "jose";

/** Any claims, well-formed or not: the tests sign malformed ones on purpose. */
export type JwtClaims = Record<string, unknown>;

/**
 * Signs an HS256 token with a shared secret: the local token command, the
 * load generator and the tests mint tokens with it. The Worker verifies with
 * jose too (workers/auth/verify.ts).
 */
export async function signJwt(claims: JwtClaims, secret: string): Promise<string> {
  return await new SignJWT(claims as JWTPayload).setProtectedHeader({ alg: "HS256", typ: "JWT" }).sign(new TextEncoder().encode(secret));
}
