// The end-of-run checks shared by the load generator and the crash test:
// settle undecided edges, wait for counts to converge, wait for outboxes to drain.
import type { HttpClient } from "./http";
import type { LikeModel } from "./model";
import { hasLiked, likeCounts, pendingDeliveries } from "./plaudit";

const BATCH = 100;

function chunks<T>(list: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Asks has_liked (exact) about every undecided edge; returns the violations. */
export async function settleUndecided(http: HttpClient, model: LikeModel, tokens: ReadonlyMap<string, string>) {
  const violations: string[] = [];
  // Map.groupBy is not in Node 20.
  const byUser = new Map<string, string[]>();
  for (const { user, item } of model.undecided()) byUser.set(user, [...(byUser.get(user) ?? []), item]);
  for (const [user, items] of byUser) {
    for (const batch of chunks(items, BATCH)) {
      const { res, liked } = await hasLiked(http, tokens.get(user)!, batch);
      if (!liked) {
        violations.push(`has_liked for user ${user} answered ${res.status}`);
        continue;
      }
      for (const item of batch) {
        const why = model.settle(user, item, liked[item] === true);
        if (why) violations.push(why);
      }
    }
  }
  return violations;
}

/** Checks every edge of the given users against has_liked; returns the violations. */
export async function checkLikeSets(
  http: HttpClient,
  model: LikeModel,
  tokens: ReadonlyMap<string, string>,
  items: readonly string[],
) {
  const violations: string[] = [];
  for (const [user, token] of tokens) {
    for (const batch of chunks(items, BATCH)) {
      const { res, liked } = await hasLiked(http, token, batch);
      if (!liked) {
        violations.push(`has_liked for user ${user} answered ${res.status}`);
        continue;
      }
      for (const item of batch) {
        const expected = model.liked(user, item);
        if (expected === undefined) violations.push(`user ${user} item ${item} is still undecided`);
        else if (liked[item] !== expected) violations.push(`user ${user} item ${item}: has_liked ${liked[item]}, expected ${expected}`);
      }
    }
  }
  return violations;
}

export type Mismatch = { item: string; expected: number; got: number | null };

export type Convergence = {
  converged: boolean;
  ms: number;
  mismatches: Mismatch[];
  /** Items seen with a negative count at any poll. */
  negatives: string[];
};

/** Reads the likes counts of up to 100 items: item id → count, null when none was read. */
export type CountReader = (http: HttpClient, items: readonly string[]) => Promise<ReadonlyMap<string, number | null> | undefined>;

const feedCounts: CountReader = async (http, items) => (await likeCounts(http, items)).counts;

/**
 * Polls the likes counts of every item in the model until each equals its
 * expected count, or the time is up. By default the counts are those every
 * reader gets (the feed route: caches, then the regional store).
 */
export async function awaitConvergence(http: HttpClient, model: LikeModel, timeoutMs: number, read: CountReader = feedCounts): Promise<Convergence> {
  const started = Date.now();
  const negatives = new Set<string>();
  const expected = new Map(model.items().map((item) => [item, model.expectedCount(item)]));
  for (const [item, count] of expected) {
    if (count === undefined) throw new Error(`item ${item} has undecided edges; settle them first`);
  }
  for (;;) {
    const mismatches: Mismatch[] = [];
    for (const batch of chunks([...expected.keys()], BATCH)) {
      const counts = await read(http, batch);
      for (const item of batch) {
        const got = counts?.get(item) ?? null;
        if (got !== null && got < 0) negatives.add(item);
        if (got !== expected.get(item)) mismatches.push({ item, expected: expected.get(item)!, got });
      }
    }
    const ms = Date.now() - started;
    if (mismatches.length === 0 || ms > timeoutMs) {
      return { converged: mismatches.length === 0, ms, mismatches, negatives: [...negatives] };
    }
    await sleep(500);
  }
}

/** Polls the admin view until no user has a change the item side has not acknowledged. */
export async function awaitOutboxesDrained(http: HttpClient, serviceToken: string, users: readonly string[], timeoutMs: number) {
  const started = Date.now();
  let remaining = [...users];
  for (;;) {
    const still: string[] = [];
    for (const batch of chunks(remaining, 16)) {
      const pending = await Promise.all(batch.map((user) => pendingDeliveries(http, serviceToken, user)));
      batch.forEach((user, i) => {
        if (pending[i] !== 0) still.push(user);
      });
    }
    remaining = still;
    const ms = Date.now() - started;
    if (remaining.length === 0 || ms > timeoutMs) return { drained: remaining.length === 0, ms, pendingUsers: remaining };
    await sleep(500);
  }
}
