import { createLocalJWKSet, type JSONWebKeySet, type JWTVerifyGetKey } from "jose";
import { log } from "../../shared/log";
import { unavailable } from "../lib/errors";

/** How a fetched key set is kept: how long it is fresh, and the least time between two fetches. */
export type KeySetPolicy = { maxAgeMs: number; floorMs: number; now: number };

type Entry = {
  set: JSONWebKeySet | null;
  lookup: JWTVerifyGetKey | null;
  fetchedAt: number;
  attemptedAt: number;
  inflight: Promise<void> | null;
};

/** What a key set's URL served, per isolate: every verification reads from here, not from the provider. */
const entries = new Map<string, Entry>();
const inline = new Map<string, JWTVerifyGetKey>();
const FETCH_TIMEOUT_MS = 5_000;

function isKeySet(value: unknown): value is JSONWebKeySet {
  return typeof value === "object" && value !== null && Array.isArray((value as { keys?: unknown }).keys);
}

/** Keys given in the configuration as JSON (`{"keys": [...]}`); a malformed value is a configuration error. */
export function inlineKeys(json: string): JWTVerifyGetKey {
  let lookup = inline.get(json);
  if (!lookup) {
    const set: unknown = JSON.parse(json);
    if (!isKeySet(set)) throw new Error("invalid configuration: an inline key set must be {\"keys\": [...]}");
    lookup = createLocalJWKSet(set);
    inline.set(json, lookup);
  }
  return lookup;
}

async function refetch(url: string, entry: Entry, now: number): Promise<void> {
  entry.attemptedAt = now;
  try {
    const response = await fetch(url, { headers: { accept: "application/json" }, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const set: unknown = await response.json();
    if (!isKeySet(set)) throw new Error("the answer is not a JSON Web Key Set");
    entry.set = set;
    entry.lookup = createLocalJWKSet(set);
    entry.fetchedAt = now;
  } catch (error) {
    // Keys already held keep working while the provider is down.
    log("warn", "jwks_fetch_failed", { url, error: String(error), cached: entry.set !== null });
  }
}

function knows(set: JSONWebKeySet | null, kid: string | undefined): boolean {
  return set !== null && (kid === undefined || set.keys.some((key) => key.kid === kid));
}

/**
 * The keys at `url` for a token naming `kid`. The set is fetched when none is
 * held, when it is older than the maximum age, or when it lacks the `kid` (a
 * provider rotated its keys), but never twice within the floor: a stream of
 * forged `kid`s costs the provider one fetch per floor, not one per request.
 * With no keys held and none to be had, the answer is 503, never a 401 that
 * would tell a client its good token is bad.
 */
export async function remoteKeys(url: string, kid: string | undefined, policy: KeySetPolicy): Promise<JWTVerifyGetKey> {
  let entry = entries.get(url);
  if (!entry) {
    entry = { set: null, lookup: null, fetchedAt: 0, attemptedAt: -Infinity, inflight: null };
    entries.set(url, entry);
  }
  const stale = policy.now - entry.fetchedAt >= policy.maxAgeMs;
  const due = policy.now - entry.attemptedAt >= policy.floorMs;
  if ((stale || !knows(entry.set, kid)) && (due || entry.inflight)) {
    const current = entry;
    current.inflight ??= refetch(url, current, policy.now).finally(() => (current.inflight = null));
    await current.inflight;
  }
  if (!entry.lookup) {
    const wait = Math.max(1, Math.ceil((entry.attemptedAt + policy.floorMs - policy.now) / 1000));
    throw unavailable("The identity provider's keys cannot be fetched right now.", wait);
  }
  return entry.lookup;
}
