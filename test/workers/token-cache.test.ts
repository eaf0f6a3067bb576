import { describe, expect, it } from "vitest";
import { signJwt } from "../../shared/jwt";
import { VERIFIED_FOR_MS, VERIFIED_TOKENS, verifyToken } from "../../workers/auth/verify";
import { ApiError } from "../../workers/lib/errors";
import { freshId } from "./helpers";
import { withVars } from "./idp";

// A token verified again within VERIFIED_FOR_MS is answered from the isolate's
// cache: the very same result object comes back, which is how these tests see it.

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

describe("verified tokens", () => {
  it("checks a token's signature once a minute, and its expiry on every request", async () => {
    const env = withVars({ AUTH_SECRET: SECRET });
    const now = Date.now();
    const token = await signJwt({ sub: freshId(), exp: seconds(now) + 3600 }, SECRET);
    const first = await verifyToken(token, env, now);
    expect(await verifyToken(token, env, now + 1_000)).toBe(first);
    expect(await verifyToken(token, env, now + VERIFIED_FOR_MS - 1)).toBe(first);
    const later = await verifyToken(token, env, now + VERIFIED_FOR_MS);
    expect(later).not.toBe(first);
    expect(later.claims).toEqual(first.claims);

    const short = await signJwt({ sub: freshId(), exp: seconds(now) + 2 }, SECRET);
    await verifyToken(short, env, now);
    expect(await refusal(verifyToken(short, env, (seconds(now) + 2) * 1000))).toMatch(/expired/);
  });

  it("refuses under another configuration a token it accepted under one", async () => {
    const now = Date.now();
    const token = await signJwt({ sub: freshId(), exp: seconds(now) + 3600 }, SECRET);
    await verifyToken(token, withVars({ AUTH_SECRET: SECRET }), now);
    expect(await refusal(verifyToken(token, withVars({ AUTH_SECRET: "another-secret" }), now))).toMatch(/signature/);
  });

  it("does not take a verification made later for one made earlier", async () => {
    const env = withVars({ AUTH_SECRET: SECRET });
    const now = Date.now();
    const notYet = await signJwt({ sub: freshId(), nbf: seconds(now) + 600, exp: seconds(now) + 3600 }, SECRET);
    await verifyToken(notYet, env, now + 700_000);
    await refusal(verifyToken(notYet, env, now));
  });

  it(`keeps at most ${VERIFIED_TOKENS} tokens, pushing out the oldest`, async () => {
    const env = withVars({ AUTH_SECRET: SECRET });
    const now = Date.now();
    const tokens = await Promise.all(
      Array.from({ length: VERIFIED_TOKENS + 1 }, () => signJwt({ sub: freshId(), exp: seconds(now) + 3600 }, SECRET)),
    );
    const first = await verifyToken(tokens[0]!, env, now);
    const second = await verifyToken(tokens[1]!, env, now);
    for (const token of tokens.slice(2)) await verifyToken(token, env, now);
    expect(await verifyToken(tokens[1]!, env, now)).toBe(second);
    expect(await verifyToken(tokens[0]!, env, now)).not.toBe(first);
  });
});
