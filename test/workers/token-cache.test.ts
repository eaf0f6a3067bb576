import { describe, expect, it } from "vitest";
import { signJwt } from "../../shared/jwt";
import { VERIFIED_FOR_MS, VERIFIED_TOKEN_MAX_CHARS, VERIFIED_TOKENS } from "../../workers/auth/remembered-tokens";
import { verifyBearer, verifyToken } from "../../workers/auth/verify";
import { ApiError } from "../../workers/lib/errors";
import { freshId } from "./helpers";
import { withVars } from "./idp";

// A bearer token verified again within VERIFIED_FOR_MS is answered from the
// isolate's cache: the very same result object comes back, which is how these
// tests see it.

const SECRET = "token-cache-secret";
const seconds = (ms: number) => Math.floor(ms / 1000);

async function refusal(work: Promise<unknown>): Promise<string> {
  const error = await work.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  expect((error as ApiError).status).toBe(401);
  return (error as ApiError).message;
}

describe("verified bearer tokens", () => {
  it("checks a token's signature once a minute, and its expiry on every request", async () => {
    const env = withVars({ AUTH_SECRET: SECRET });
    const now = Date.now();
    const token = await signJwt({ sub: freshId(), exp: seconds(now) + 3600 }, SECRET);
    const first = await verifyBearer(token, env, now);
    expect(await verifyBearer(token, env, now + 1_000)).toBe(first);
    expect(await verifyBearer(token, env, now + VERIFIED_FOR_MS - 1)).toBe(first);
    const later = await verifyBearer(token, env, now + VERIFIED_FOR_MS);
    expect(later).not.toBe(first);
    expect(later.claims).toEqual(first.claims);

    const short = await signJwt({ sub: freshId(), exp: seconds(now) + 2 }, SECRET);
    await verifyBearer(short, env, now);
    expect(await refusal(verifyBearer(short, env, (seconds(now) + 2) * 1000))).toMatch(/expired/);
  });

  it("refuses under another configuration a token it accepted under one", async () => {
    const now = Date.now();
    const token = await signJwt({ sub: freshId(), exp: seconds(now) + 3600 }, SECRET);
    await verifyBearer(token, withVars({ AUTH_SECRET: SECRET }), now);
    expect(await refusal(verifyBearer(token, withVars({ AUTH_SECRET: "another-secret" }), now))).toMatch(/signature/);
  });

  it("does not take a verification made later for one made earlier", async () => {
    const env = withVars({ AUTH_SECRET: SECRET });
    const now = Date.now();
    const notYet = await signJwt({ sub: freshId(), nbf: seconds(now) + 600, exp: seconds(now) + 3600 }, SECRET);
    await verifyBearer(notYet, env, now + 700_000);
    await refusal(verifyBearer(notYet, env, now));
  });

  it("checks again every time a token too long to keep, a grant, and any token when key sets are kept for less than the cache's minute", async () => {
    const now = Date.now();
    const env = withVars({ AUTH_SECRET: SECRET });
    const long = await signJwt({ sub: freshId(), exp: seconds(now) + 3600, pad: "x".repeat(VERIFIED_TOKEN_MAX_CHARS) }, SECRET);
    expect(long.length).toBeGreaterThan(VERIFIED_TOKEN_MAX_CHARS);
    expect(await verifyBearer(long, env, now)).not.toBe(await verifyBearer(long, env, now));
    const token = await signJwt({ sub: freshId(), exp: seconds(now) + 3600 }, SECRET);
    expect(await verifyToken(token, env, now)).not.toBe(await verifyToken(token, env, now));
    const briefKeys = withVars({ AUTH_SECRET: SECRET, JWKS_MAX_AGE_SECONDS: "0" });
    expect(await verifyBearer(token, briefKeys, now)).not.toBe(await verifyBearer(token, briefKeys, now));
  });

  it(`keeps at most ${VERIFIED_TOKENS} tokens, pushing out the oldest`, async () => {
    const env = withVars({ AUTH_SECRET: SECRET });
    const now = Date.now();
    const tokens = await Promise.all(
      Array.from({ length: VERIFIED_TOKENS + 1 }, () => signJwt({ sub: freshId(), exp: seconds(now) + 3600 }, SECRET)),
    );
    const first = await verifyBearer(tokens[0]!, env, now);
    const second = await verifyBearer(tokens[1]!, env, now);
    for (const token of tokens.slice(2)) await verifyBearer(token, env, now);
    expect(await verifyBearer(tokens[1]!, env, now)).toBe(second);
    expect(await verifyBearer(tokens[0]!, env, now)).not.toBe(first);
  });
});
