import type { JWTPayload } from "jose";

/**
 * The claim at a dotted path (`realm_access.roles` reaches into an object,
 * as Keycloak nests its roles); a claim whose own name holds dots, as
 * Auth0's namespaced `https://example.com/uid` does, is matched whole first.
 */
export function claimAt(claims: JWTPayload, path: string): unknown {
  if (path in claims) return claims[path];
  let value: unknown = claims;
  for (const part of path.split(".")) {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** `claim=value`: the claim equals the value, or is a list that holds it (roles, groups, permissions). */
export function claimHolds(claims: JWTPayload, rule: string): boolean {
  const split = rule.indexOf("=");
  const value = claimAt(claims, rule.slice(0, split));
  const wanted = rule.slice(split + 1);
  return Array.isArray(value) ? value.includes(wanted) : value === wanted;
}

/** A short string claim (a device id, a standing), or nothing: anything else is ignored, not trusted. */
export function shortString(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 && value.length <= 128 ? value : undefined;
}
