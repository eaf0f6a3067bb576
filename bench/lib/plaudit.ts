// plaudit's API as the load generator and the crash test use it: every call
// returns what happened in the terms the exactness checks need.
import { signJwt } from "../../shared/jwt";
import type { HttpClient, HttpResult } from "./http";
import type { Answer, LikeStatus } from "./model";

export const ITEM_TYPE = "post";
const LIKE_STATUSES: readonly string[] = ["liked", "already_liked", "unliked", "not_liked"];

/**
 * What one like or unlike did: an answer for the model (status null when the
 * request may or may not have landed), `rejected` for a 429 (nothing
 * changed), `invalid` for an answer the API contract does not allow.
 */
export type ToggleOutcome =
  | { kind: "answered"; answer: Answer; res: HttpResult }
  | { kind: "rejected"; res: HttpResult }
  | { kind: "invalid"; res: HttpResult; why: string };

export async function toggle(http: HttpClient, token: string, item: string, on: boolean): Promise<ToggleOutcome> {
  const res = await http.request(on ? "POST" : "DELETE", "/v1/like", { token, body: { item_id: item, item_type: ITEM_TYPE } });
  if (res.status === 200) {
    const status = (res.body as { status?: unknown } | null)?.status;
    if (typeof status === "string" && LIKE_STATUSES.includes(status)) {
      return { kind: "answered", answer: { on, status: status as LikeStatus }, res };
    }
    return { kind: "invalid", res, why: `200 without a like status: ${JSON.stringify(res.body)}` };
  }
  // A refused connection never reached the server: nothing changed, like a 429.
  if (res.status === 429 || res.error?.includes("ECONNREFUSED")) return { kind: "rejected", res };
  // No answer, or a server error: the change may or may not have been committed.
  if (res.status === 0 || res.status >= 500) return { kind: "answered", answer: { on, status: null }, res };
  return { kind: "invalid", res, why: `${res.status} ${JSON.stringify(res.body)}` };
}

/** The call's change was answered (not refused, not lost, not outside the contract). */
export const answeredWithStatus = (outcome: ToggleOutcome) => outcome.kind === "answered" && outcome.answer.status !== null;

/**
 * Likes or unlikes, each call the opposite of what the last answered call
 * left for that user and item: the steady load of the memory and profile
 * benches, which need no exactness model. Resolves to the call's outcome.
 */
export function flipper(http: HttpClient, tokens: ReadonlyMap<string, string>): (user: string, item: string) => Promise<ToggleOutcome> {
  const liked = new Set<string>();
  return async (user, item) => {
    const key = `${user}:${item}`;
    const on = !liked.has(key);
    const outcome = await toggle(http, tokens.get(user)!, item, on);
    if (answeredWithStatus(outcome)) {
      if (on) liked.add(key);
      else liked.delete(key);
    }
    return outcome;
  };
}

export async function hasLiked(http: HttpClient, token: string, items: readonly string[]) {
  const res = await http.request("POST", "/v1/has_liked", { token, body: { item_ids: items, item_type: ITEM_TYPE } });
  const liked = res.status === 200 ? (res.body as { liked?: Record<string, boolean> }).liked : undefined;
  return { res, liked };
}

/** Likes counts of up to 100 items; `counts` maps item id to count (null when the API had none). */
export async function likeCounts(http: HttpClient, items: readonly string[]) {
  const res = await http.request("POST", "/v1/counts", {
    body: { items: items.map((item_id) => ({ item_id, item_type: ITEM_TYPE })), counter_types: ["likes"] },
  });
  if (res.status !== 200) return { res, counts: undefined };
  const raw = (res.body as { counts?: Record<string, { likes?: number } | null> }).counts ?? {};
  const counts = new Map<string, number | null>();
  for (const item of items) {
    const entry = raw[`${ITEM_TYPE}:${item}`];
    counts.set(item, typeof entry?.likes === "number" ? entry.likes : null);
  }
  return { res, counts };
}

/** Likes counts read from the items' objects themselves (the operators' item view): a strong read. */
export async function objectLikeCounts(http: HttpClient, serviceToken: string, items: readonly string[]) {
  const counts = new Map<string, number | null>();
  for (const item of items) {
    const res = await http.request("GET", `/v1/admin/items/${ITEM_TYPE}/${item}`, { token: serviceToken });
    const likes = (res.body as { counts?: { likes?: unknown } } | null)?.counts?.likes;
    counts.set(item, res.status === 200 && typeof likes === "number" ? likes : null);
  }
  return counts;
}

export async function pendingDeliveries(http: HttpClient, serviceToken: string, user: string): Promise<number | null> {
  const res = await http.request("GET", `/v1/admin/users/${user}`, { token: serviceToken });
  const pending = (res.body as { pending_deliveries?: unknown } | null)?.pending_deliveries;
  return res.status === 200 && typeof pending === "number" ? pending : null;
}

export type HotItemShare = {
  item: string;
  hot: boolean;
  shards: number;
  /** Write calls the head served (changes it applied or refused). */
  headApplies: number;
  /** Write calls the item took in all: the head's plus every child's changes. */
  writes: number;
  /** Storage commits the head made since it started. */
  headCommits: number;
  headShare: number;
};

/** How the item's writes were spread between its head and its children (the admin item view). */
export async function hotItemShare(http: HttpClient, serviceToken: string, item: string): Promise<HotItemShare | null> {
  const res = await http.request("GET", `/v1/admin/items/${ITEM_TYPE}/${item}`, { token: serviceToken });
  if (res.status !== 200) return null;
  const body = res.body as { hot: boolean; shards: number; calls: { applies: number; commits: number }; children: { writes: number }[] };
  const childWrites = body.children.reduce((sum, c) => sum + c.writes, 0);
  const writes = body.calls.applies + childWrites;
  return {
    item,
    hot: body.hot,
    shards: body.shards,
    headApplies: body.calls.applies,
    writes,
    headCommits: body.calls.commits,
    headShare: writes === 0 ? 0 : body.calls.applies / writes,
  };
}

/** The signing secret: the first of a comma-separated AUTH_SECRET. */
function signingSecret(authSecret: string): string {
  const secret = authSecret.split(",")[0]?.trim();
  if (!secret) throw new Error("AUTH_SECRET is empty");
  return secret;
}

export async function userTokens(users: readonly string[], authSecret: string, ttlSeconds = 6 * 3600) {
  const exp = Math.floor(Date.now() / 1000) + ttlSeconds;
  const secret = signingSecret(authSecret);
  const tokens = new Map<string, string>();
  for (const user of users) tokens.set(user, await signJwt({ sub: user, exp }, secret));
  return tokens;
}

export async function serviceToken(authSecret: string, ttlSeconds = 6 * 3600) {
  return await signJwt({ sub: "0", role: "service", exp: Math.floor(Date.now() / 1000) + ttlSeconds }, signingSecret(authSecret));
}

/** Ids no earlier run used: a time-based base, so runs against a long-lived server never meet. */
export function idRange(count: number, offset = 0n): string[] {
  const base = BigInt(Date.now()) * 1_000_000n + BigInt(Math.floor(Math.random() * 1000)) * 1000n + offset;
  return Array.from({ length: count }, (_, i) => (base + BigInt(i)).toString());
}
