import { env } from "cloudflare:workers";
import { SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { signJwt } from "../../shared/jwt";
import { call, freshId, json } from "./helpers";
import { fetchesOf, keySetOnly, keySetUrl, newKey, providerDown, withVars, type ProviderKey } from "./idp";

// Tokens from an identity provider: key sets served on 127.0.0.1 by
// test/node/jwks-setup.ts, one set per test so rotations and outages stay local.

const likeWith = (bindings: Env, token: string) =>
  call("POST", "/v1/like", { env: bindings, token, body: { item_id: freshId(), item_type: "post" } });

async function expect401(response: Response, reason: RegExp): Promise<void> {
  expect(response.status).toBe(401);
  const body = await json(response);
  expect(body.error).toBe("unauthorized");
  expect(body.message).toMatch(reason);
}

const now = () => Math.floor(Date.now() / 1000);
const b64 = (value: unknown) => btoa(JSON.stringify(value)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");

describe("tokens verified with a key set", () => {
  it("accepts RS256, ES256 and EdDSA tokens from the provider's key set", async () => {
    // Each new key is a new kid: no floor, so each one is fetched at once.
    const bindings = keySetOnly("algorithms", { JWKS_REFETCH_FLOOR_SECONDS: "0" });
    for (const alg of ["RS256", "ES256", "EdDSA"] as const) {
      const key = await newKey("algorithms", alg);
      const res = await likeWith(bindings, await key.sign(freshId()));
      expect({ alg, status: res.status }).toEqual({ alg, status: 200 });
      expect((await json(res)).status).toBe("liked");
    }
  });

  it("picks up a key with a new kid without a restart", async () => {
    const bindings = keySetOnly("rotation", { JWKS_REFETCH_FLOOR_SECONDS: "0" });
    const first = await newKey("rotation");
    expect((await likeWith(bindings, await first.sign(freshId()))).status).toBe(200);
    const rotated = await newKey("rotation", "ES256");
    expect((await likeWith(bindings, await rotated.sign(freshId()))).status).toBe(200);
    expect((await likeWith(bindings, await first.sign(freshId()))).status).toBe(200);
  });

  it("fetches the key set at most once per floor, however many unknown kids arrive", async () => {
    const bindings = keySetOnly("forged-kids", { JWKS_REFETCH_FLOOR_SECONDS: "3600" });
    const key = await newKey("forged-kids");
    expect((await likeWith(bindings, await key.sign(freshId()))).status).toBe(200);
    const before = await fetchesOf("forged-kids");
    for (let i = 0; i < 20; i++) {
      await expect401(await likeWith(bindings, await key.sign(freshId(), {}, { kid: `forged-${i}` })), /signature|malformed/);
    }
    expect(await fetchesOf("forged-kids")).toBe(before);
    expect((await likeWith(bindings, await key.sign(freshId()))).status).toBe(200);
  });

  describe("refuses with 401", () => {
    let key: ProviderKey;
    const bindings = keySetOnly("refusals");
    beforeAll(async () => {
      key = await newKey("refusals");
    });

    it("a wrong issuer", async () => {
      await expect401(await likeWith(bindings, await key.sign(freshId(), { iss: "https://elsewhere.example/" })), /iss/);
    });

    it("a wrong audience, or none", async () => {
      await expect401(await likeWith(bindings, await key.sign(freshId(), { aud: "another-app" })), /aud/);
      await expect401(await likeWith(bindings, await key.sign(freshId(), { aud: undefined })), /aud/);
    });

    it("an expired token, even by a second, and one without exp", async () => {
      await expect401(await likeWith(bindings, await key.sign(freshId(), { exp: now() - 1 })), /expired/);
      await expect401(await likeWith(bindings, await key.sign(freshId(), { exp: undefined })), /exp/);
    });

    it("a token not yet valid, or issued in the future, beyond the clock skew", async () => {
      await expect401(await likeWith(bindings, await key.sign(freshId(), { nbf: now() + 300 })), /nbf/);
      await expect401(await likeWith(bindings, await key.sign(freshId(), { iat: now() + 300 })), /iat/);
      expect((await likeWith(bindings, await key.sign(freshId(), { nbf: now() + 5, iat: now() + 5 }))).status).toBe(200);
    });

    it("alg: none", async () => {
      const unsigned = `${b64({ alg: "none", typ: "JWT", kid: key.kid })}.${b64({ sub: freshId(), iss: env.AUTH_ISSUER, aud: env.AUTH_AUDIENCE, exp: now() + 60 })}.`;
      await expect401(await likeWith(bindings, unsigned), /algorithm|malformed/);
    });

    it("an HS256 token signed with the provider's public key (algorithm confusion)", async () => {
      const publicKey = new TextEncoder().encode(JSON.stringify(key.publicJwk));
      const claims = { sub: freshId(), iss: env.AUTH_ISSUER, aud: env.AUTH_AUDIENCE, exp: now() + 60 };
      const confused = await new SignJWT(claims).setProtectedHeader({ alg: "HS256", kid: key.kid }).sign(publicKey);
      await expect401(await likeWith(bindings, confused), /HS256/);
      // With shared secrets configured too, HS256 still verifies against those secrets only.
      await expect401(await likeWith(withVars({ AUTH_JWKS_URL: keySetUrl("refusals") }), confused), /signature/);
    });

    it("an algorithm outside the allowlist, even with a valid signature", async () => {
      const es = await newKey("refusals", "ES256");
      const strict = keySetOnly("refusals", { AUTH_ALGORITHMS: "RS256" });
      await expect401(await likeWith(strict, await es.sign(freshId())), /algorithm/);
    });
  });

  it("keeps verifying with the keys it holds while the provider is down", async () => {
    const bindings = keySetOnly("outage", { JWKS_MAX_AGE_SECONDS: "0", JWKS_REFETCH_FLOOR_SECONDS: "0" });
    const key = await newKey("outage");
    expect((await likeWith(bindings, await key.sign(freshId()))).status).toBe(200);
    await providerDown("outage");
    const before = await fetchesOf("outage");
    expect((await likeWith(bindings, await key.sign(freshId()))).status).toBe(200);
    // The stale set was due for a refetch, which failed: the held keys answered.
    expect(await fetchesOf("outage")).toBeGreaterThan(before);
  });

  it("answers 503 with Retry-After, never 500, when the provider is down and no keys are held", async () => {
    const bindings = keySetOnly("never-up", { JWKS_REFETCH_FLOOR_SECONDS: "20" });
    const key = await newKey("never-up");
    await providerDown("never-up");
    for (let i = 0; i < 2; i++) {
      const res = await likeWith(bindings, await key.sign(freshId()));
      expect(res.status).toBe(503);
      expect((await json(res)).error).toBe("unavailable");
      const retryAfter = Number(res.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(20);
    }
    expect(await fetchesOf("never-up")).toBe(1);
  });
});

describe("who the token names", () => {
  it("reads the user from a configured claim, namespaced as Auth0 writes custom claims", async () => {
    const bindings = keySetOnly("user-claim", { AUTH_USER_CLAIM: "https://plaudit.test/uid" });
    const key = await newKey("user-claim");
    const user = freshId();
    const token = await key.sign("auth0|abc123", { "https://plaudit.test/uid": user });
    expect((await likeWith(bindings, token)).status).toBe(200);
    await expect401(await likeWith(bindings, await key.sign(user)), /uid/);
  });

  it("recognises a service token by a claim that holds a value, as Keycloak lists roles", async () => {
    const bindings = keySetOnly("service-claim", { AUTH_SERVICE_CLAIM: "realm_access.roles=plaudit-admin" });
    const key = await newKey("service-claim");
    const path = `/v1/admin/users/${freshId()}`;
    const service = await key.sign(freshId(), { realm_access: { roles: ["viewer", "plaudit-admin"] } });
    const user = await key.sign(freshId(), { realm_access: { roles: ["viewer"] }, role: "service" });
    expect((await call("GET", path, { env: bindings, token: service })).status).toBe(200);
    expect((await call("GET", path, { env: bindings, token: user })).status).toBe(403);
  });

  it("recognises a service token by a separate key set, whatever its claims", async () => {
    const bindings = keySetOnly("users-set", { AUTH_SERVICE_JWKS_URL: keySetUrl("services-set") });
    const userKey = await newKey("users-set");
    const serviceKey = await newKey("services-set", "ES256");
    const path = `/v1/admin/users/${freshId()}`;
    expect((await call("GET", path, { env: bindings, token: await serviceKey.sign(freshId()) })).status).toBe(200);
    const claimsService = await userKey.sign(freshId(), { role: "service" });
    expect((await call("GET", path, { env: bindings, token: claimsService })).status).toBe(403);
    expect((await likeWith(bindings, claimsService)).status).toBe(200);
  });

  it("takes HS256 tokens with the shared secrets alongside a key set", async () => {
    const token = await signJwt({ sub: freshId(), exp: now() + 60 }, "test-secret-rotated");
    expect((await likeWith(env, token)).status).toBe(200);
    const key = await newKey("default");
    expect((await likeWith(env, await key.sign(freshId()))).status).toBe(200);
  });
});
