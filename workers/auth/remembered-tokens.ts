/**
 * The bounds of the verified-token cache (workers/auth/verify.ts), in a
 * module of their own so that the bench's reference Workers
 * (bench/reference/auth.ts) remember tokens under the very same ones.
 */

/** How long an isolate trusts a signature it checked; never longer than a fetched key set is kept (JWKS_MAX_AGE_SECONDS). */
export const VERIFIED_FOR_MS = 60_000;
/** Bearer tokens remembered per isolate: a client sends its token with every request. */
export const VERIFIED_TOKENS = 1_000;
/** A longer token is checked every time, so the remembered ones hold at most a few MB (the token and its claims). */
export const VERIFIED_TOKEN_MAX_CHARS = 2_048;
