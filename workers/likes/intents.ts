import type { ToggleLimits, ToggleRequest, ToggleResult } from "../../shared/contracts";
import type { ToggleCounter } from "../../shared/counters";
import { DeadlineExceeded } from "../../shared/deadline";
import type { DrainIntentsRequest } from "../../shared/intents";
import { log } from "../../shared/log";
import { metrics } from "../../metrics/recorder";
import { deleteIntents, insertIntent, intentsFor, intentsOf, usersWithIntents, type IntentRow, type NewIntent } from "../stores/pending-intents";
import { sendToQueue } from "../../durable-objects/lib/queue-send";
import { userLikes } from "../lib/objects";

/** A toggle kept while the user's object could not be reached: the target state and when it was asked. */

const CALLER = "intents";
/** A user's intents read per drain; a larger backlog sends the drain again at once for the rest. */
const USER_BATCH = 500;
/** Intents per object call: one call applies many, each still its own transaction in the object. */
const CALL_BATCH = 100;
/** Users the cron drains per run, this many at a time: the backstop for drains whose messages gave up. */
const CRON_USERS = 1_000;
const CRON_CONCURRENCY = 16;
/**
 * While the object stays unreachable, the drain asks again after these
 * delays (seconds), the last repeated: an object that answers again has its
 * intents applied within about the last delay. After MAX_ATTEMPTS (each also
 * waiting up to OBJECT_CALL_TIMEOUT_MS: about six and a half minutes for an
 * object that refuses at once, up to fifteen for one that never answers) the
 * cron's run takes over, so an object gone for hours costs a message every few
 * seconds for those minutes, then nothing until the cron.
 */
const RETRY_DELAYS = [1, 1, 2, 2, 3, 4];
const MAX_ATTEMPTS = 100;
/** An isolate asks for one user's drain at most once in this window: a burst of 202s is one message. */
const ASK_WINDOW_MS = 1_000;
const asked = new Map<string, number>();

/** The object did not answer in time, or said it is overloaded: the toggle can wait, the user need not. */
export function unreachable(error: unknown): boolean {
  return error instanceof DeadlineExceeded || (error as { overloaded?: unknown } | null)?.overloaded === true;
}

/** Keeps a toggle in the durable buffer (D1, `pending_intents`) and asks for the user's drain, a second later. */
export async function keepIntent(env: Env, intent: NewIntent): Promise<void> {
  await insertIntent(env, intent);
  metrics.count("pending_intents_total", { outcome: "kept" });
  const now = Date.now();
  if ((asked.get(intent.user) ?? 0) > now - ASK_WINDOW_MS) return;
  asked.set(intent.user, now);
  if (asked.size > 10_000) asked.clear();
  // The cron drains it anyway: a lost request only delays it.
  await askDrain(env, intent.user, 0).catch((error: unknown) => log("warn", "intents_drain_not_asked", { error: String(error) }));
}

async function askDrain(env: Env, user: string, attempt: number): Promise<void> {
  const request: DrainIntentsRequest = { v: 1, kind: "drain_intents", user, attempt };
  const delaySeconds = attempt === 0 ? 1 : RETRY_DELAYS[Math.min(attempt, RETRY_DELAYS.length) - 1]!;
  await sendToQueue(env, user, [request], { delaySeconds });
}

export type UserDrain = { settled: number; left: "none" | "more" | "unreachable" };

/**
 * Applies one user's oldest kept intents through the call a toggle makes,
 * each with the time it was asked, a batch per object call: the object
 * applies its limits then, and ignores an intent asked before the user's
 * last action on that edge (I6), so intents applied twice (two drains at
 * once, a crash between the answer and the delete) change nothing more. A
 * row is deleted once the object answered (applied, refused or superseded);
 * the rest stay for the next drain.
 */
export async function drainUser(env: Env, user: string): Promise<UserDrain> {
  const rows = await intentsOf(env, user, USER_BATCH);
  const settled: number[] = [];
  let left: UserDrain["left"] = rows.length === USER_BATCH ? "more" : "none";
  for (let start = 0; start < rows.length; start += CALL_BATCH) {
    const batch = rows.slice(start, start + CALL_BATCH);
    let results: ToggleResult[];
    try {
      results = await userLikes(env, user, CALLER).applyIntents(batch.map((row) => toRequest(user, row)));
    } catch (error) {
      log("warn", "intents_not_applied", { count: rows.length - start, error: String(error) });
      left = "unreachable";
      break;
    }
    const now = Date.now();
    for (const [i, result] of results.entries()) {
      const outcome = result.kind === "rate_limited" || result.kind === "barred" ? "refused" : result.kind === "superseded" ? "superseded" : "applied";
      metrics.count("pending_intents_total", { outcome });
      metrics.observe("pending_intent_wait_seconds", {}, Math.max(0, now - batch[i]!.asked_at) / 1000);
      settled.push(batch[i]!.id);
    }
  }
  if (settled.length > 0) await deleteIntents(env, settled);
  return { settled: settled.length, left };
}

function toRequest(user: string, row: IntentRow): ToggleRequest {
  const limits = row.limits ? (JSON.parse(row.limits) as ToggleLimits) : undefined;
  return { user, item: row.item, counter: row.counter, on: row.target === 1, askedAt: row.asked_at, ...(limits ? { limits } : {}) };
}

/**
 * A queued drain of one user: a larger backlog asks again at once for the
 * rest, an unreachable object asks again after a short delay, up to
 * MAX_ATTEMPTS; intents kept after the drain read its rows ask for their own.
 */
export async function answerDrain(env: Env, request: DrainIntentsRequest): Promise<void> {
  const { left } = await drainUser(env, request.user);
  if (left === "more") await askDrain(env, request.user, 0);
  else if (left === "unreachable" && request.attempt + 1 < MAX_ATTEMPTS) await askDrain(env, request.user, request.attempt + 1);
}

/** The cron's pass: every user with kept intents (up to CRON_USERS), drained in parallel. Returns how many intents were settled. */
export async function drainIntents(env: Env): Promise<number> {
  const users = await usersWithIntents(env, CRON_USERS);
  let settled = 0;
  let next = 0;
  const worker = async () => {
    while (next < users.length) {
      const user = users[next++]!;
      settled += await drainUser(env, user).then(
        (drain) => drain.settled,
        (error: unknown) => (log("warn", "intents_drain_failed", { error: String(error) }), 0),
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(CRON_CONCURRENCY, users.length) }, worker));
  return settled;
}

/** The latest pending intent of each of a user's items for one counter, for read-your-writes; empty (the usual case) costs one indexed query. */
export async function pendingOf(env: Env, user: string, counter: ToggleCounter): Promise<Map<string, { on: boolean; askedAt: number }>> {
  const rows = await intentsFor(env, user, counter, USER_BATCH);
  const latest = new Map<string, { on: boolean; askedAt: number }>();
  for (const row of rows) {
    const known = latest.get(row.item);
    if (!known || row.asked_at >= known.askedAt) latest.set(row.item, { on: row.target === 1, askedAt: row.asked_at });
  }
  return latest;
}
