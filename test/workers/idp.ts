import { env } from "cloudflare:workers";
import { importJWK, SignJWT, type JWK, type JWTPayload } from "jose";

// An identity provider for the tests: key sets served by test/node/jwks-setup.ts
// on 127.0.0.1, and tokens signed with their private keys.

export type Alg = "RS256" | "ES256" | "EdDSA";

/** A signing key of one key set; `sign` fills in sub, iss, aud, iat and exp unless the claims say otherwise. */
export type ProviderKey = {
  kid: string;
  publicJwk: JWK;
  sign(userId: string, claims?: Record<string, unknown>, header?: Record<string, unknown>): Promise<string>;
};

export const keySetUrl = (set: string) => `${env.TEST_JWKS_SERVER}/${set}/jwks.json`;

async function control(set: string, action: string, method = "POST"): Promise<any> {
  const response = await fetch(`${env.TEST_JWKS_SERVER}/${set}/${action}`, { method });
  if (!response.ok) throw new Error(`key-set server: ${action} answered ${response.status}`);
  return await response.json();
}

/** Adds a key with a new kid to a key set (a provider rotating its keys) and returns its signer. */
export async function newKey(set: string, alg: Alg = "RS256"): Promise<ProviderKey> {
  const { privateJwk, publicJwk } = await control(set, `keys?alg=${alg}`);
  const key = await importJWK(privateJwk, alg);
  const now = Math.floor(Date.now() / 1000);
  return {
    kid: privateJwk.kid,
    publicJwk,
    sign: async (userId, claims = {}, header = {}) =>
      await new SignJWT({ sub: userId, iss: env.AUTH_ISSUER, aud: env.AUTH_AUDIENCE, iat: now, exp: now + 600, ...claims } as JWTPayload)
        .setProtectedHeader({ alg, kid: privateJwk.kid, typ: "JWT", ...header })
        .sign(key),
  };
}

export const providerDown = (set: string) => control(set, "down");
export const providerUp = (set: string) => control(set, "up");
export const fetchesOf = async (set: string): Promise<number> => (await control(set, "fetches", "GET")).fetches;

/**
 * The same bindings under other settings: the configuration is parsed per
 * `env` object, so each of these is a Worker configured differently, with
 * the same objects and databases behind it.
 */
export function withVars(vars: Record<string, string>): Env {
  return { ...env, ...vars } as Env;
}

/** A Worker that trusts only key set `set` (no shared secrets), fetching it from the test server. */
export function keySetOnly(set: string, vars: Record<string, string> = {}): Env {
  return withVars({ AUTH_SECRET: "", AUTH_JWKS_URL: keySetUrl(set), ...vars });
}
