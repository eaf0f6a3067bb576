import { decodeProtectedHeader, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey, type JWTVerifyOptions } from "jose";
import { config, type Config } from "../../shared/config";
import { ApiError, unauthorized } from "../lib/errors";
import { inlineKeys, remoteKeys } from "./key-sets";
import { TtlCache } from "../lib/ttl-cache";
import { VERIFIED_FOR_MS, VERIFIED_TOKEN_MAX_CHARS, VERIFIED_TOKENS } from "./remembered-tokens";
import { metrics } from "../../metrics/recorder";

/** A token whose signature and times hold. `service` is set when the key set decides it, null when a claim must. */
export type Verified = { claims: JWTPayload; service: boolean | null };

type KeySource = { keys: JWTVerifyGetKey; service: boolean | null };

const encoder = new TextEncoder();

function secrets(env: Env): string[] {
  return (env.AUTH_SECRET ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function keySource(url: string, json: string, settings: Config, nowMs: number): JWTVerifyGetKey | null {
  if (json) return inlineKeys(json);
  if (!url) return null;
  const policy = { maxAgeMs: settings.JWKS_MAX_AGE_SECONDS * 1000, floorMs: settings.JWKS_REFETCH_FLOOR_SECONDS * 1000, now: nowMs };
  return async (header, token) => (await remoteKeys(url, header.kid, policy))(header, token);
}

/** The configured key sets; a separate service set makes the user set's tokens plain user tokens. */
function keySources(settings: Config, nowMs: number): KeySource[] {
  const service = keySource(settings.AUTH_SERVICE_JWKS_URL, settings.AUTH_SERVICE_JWKS, settings, nowMs);
  const user = keySource(settings.AUTH_JWKS_URL, settings.AUTH_JWKS, settings, nowMs);
  return [
    ...(user ? [{ keys: user, service: service ? false : null }] : []),
    ...(service ? [{ keys: service, service: true }] : []),
  ];
}

/** jose's refusals, told back to the client in one sentence; anything else (a 503 of ours) passes through. */
function refusal(error: unknown): Error {
  if (error instanceof ApiError) return error;
  if (error instanceof errors.JWTExpired) return unauthorized("The bearer token is not accepted: token has expired.");
  if (error instanceof errors.JWTClaimValidationFailed) {
    return unauthorized(`The bearer token is not accepted: the ${error.claim} claim is missing or wrong.`);
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return unauthorized("The bearer token is not accepted: its algorithm is not allowed.");
  return unauthorized("The bearer token is not accepted: token signature is invalid or the token is malformed.");
}

/** Checks jose leaves to the caller: `exp` with no slack at all, and an `iat` that is not in the future. */
function checkTimes(claims: JWTPayload, nowSeconds: number, skew: number): void {
  if (typeof claims.exp !== "number" || claims.exp <= nowSeconds) {
    throw unauthorized("The bearer token is not accepted: token has expired.");
  }
  if (typeof claims.iat === "number" && claims.iat > nowSeconds + skew) {
    throw unauthorized("The bearer token is not accepted: the iat claim is in the future.");
  }
}

/** Given raw bytes, jose imports the secret again on every verification; imported once per secret and isolate instead. */
const hmacKeys = new Map<string, Promise<CryptoKey>>();

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = hmacKeys.get(secret);
  if (key === undefined) {
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
    hmacKeys.set(secret, key);
  }
  return key;
}

async function verifyHs256(token: string, keys: string[], options: JWTVerifyOptions): Promise<Verified> {
  for (const [index, secret] of keys.entries()) {
    try {
      const { payload } = await jwtVerify(token, await hmacKey(secret), { ...options, algorithms: ["HS256"] });
      return { claims: payload, service: null };
    } catch (error) {
      // Rotation: the newest secret signs, the older ones still verify.
      if (error instanceof errors.JWSSignatureVerificationFailed && index < keys.length - 1) continue;
      throw refusal(error);
    }
  }
  throw unauthorized("The bearer token is not accepted: HS256 tokens are not accepted here.");
}

async function verifyWithKeySets(token: string, sources: KeySource[], options: JWTVerifyOptions): Promise<Verified> {
  for (const [index, source] of sources.entries()) {
    try {
      const { payload } = await jwtVerify(token, source.keys, options);
      return { claims: payload, service: source.service };
    } catch (error) {
      if (error instanceof errors.JWKSNoMatchingKey && index < sources.length - 1) continue;
      throw refusal(error);
    }
  }
  throw unauthorized("The bearer token is not accepted: no key set is configured for its algorithm.");
}

type Remembered = { verified: Verified; at: number };

/** Tokens whose signature held, per trust configuration (one `env`: its secrets, key sets and claim rules), with when it was checked. */
const verifiedTokens = new WeakMap<object, TtlCache<Remembered>>();

function verifiedUnder(env: Env): TtlCache<Remembered> {
  let cache = verifiedTokens.get(env);
  if (cache === undefined) {
    cache = new TtlCache(VERIFIED_TOKENS);
    verifiedTokens.set(env, cache);
  }
  return cache;
}

/**
 * A request's bearer token, verified as `verifyToken` does, except that a
 * token this isolate verified under the same configuration within
 * VERIFIED_FOR_MS is not checked again. Its times are, on every request: it
 * expires when its `exp` says, remembered or not. The result is shared
 * between the requests that send the token: read it, never change it.
 */
export async function verifyBearer(token: string, env: Env, nowMs: number): Promise<Verified> {
  const settings = config(env);
  const cache = token.length <= VERIFIED_TOKEN_MAX_CHARS ? verifiedUnder(env) : null;
  const known = cache?.get(token, nowMs);
  // Only a check made at or before this moment holds for it: a token not valid yet then may be now, not the other way.
  if (known !== undefined && known.at <= nowMs) {
    checkTimes(known.verified.claims, Math.floor(nowMs / 1000), settings.AUTH_CLOCK_SKEW_SECONDS);
    metrics.count("token_verifications_total", { by: "cache" });
    return known.verified;
  }
  const verified = await verifyToken(token, env, nowMs);
  metrics.count("token_verifications_total", { by: "signature" });
  cache?.put(token, { verified, at: nowMs }, Math.min(VERIFIED_FOR_MS, settings.JWKS_MAX_AGE_SECONDS * 1000), nowMs);
  return verified;
}

/**
 * Verifies a token (a bearer token, or a grant: workers/privacy/grant.ts,
 * never remembered) against what the configuration trusts: HS256 with
 * the shared secrets, every other algorithm (from the allowlist) with the key
 * sets only. The algorithm picks the path and a path takes only its own kind
 * of key, so a provider's public key can never be used as an HMAC secret.
 */
export async function verifyToken(token: string, env: Env, nowMs: number): Promise<Verified> {
  const settings = config(env);
  const shared = secrets(env);
  const sources = keySources(settings, nowMs);
  if (shared.length === 0 && sources.length === 0) {
    throw new ApiError(503, "unavailable", "Authentication is not configured.", { retryAfter: 60 });
  }
  let alg: unknown;
  try {
    alg = decodeProtectedHeader(token).alg;
  } catch {
    throw unauthorized("The bearer token is not accepted: token is not a JWT.");
  }
  const skew = settings.AUTH_CLOCK_SKEW_SECONDS;
  const base: JWTVerifyOptions = { clockTolerance: skew, requiredClaims: ["exp"], currentDate: new Date(nowMs) };
  const verified =
    alg === "HS256"
      ? await verifyHs256(token, shared, base)
      : await verifyWithKeySets(token, sources, {
          ...base,
          algorithms: settings.AUTH_ALGORITHMS,
          issuer: settings.AUTH_ISSUER,
          audience: settings.AUTH_AUDIENCE,
        });
  checkTimes(verified.claims, Math.floor(nowMs / 1000), skew);
  return verified;
}
