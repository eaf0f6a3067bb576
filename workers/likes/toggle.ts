import type { ToggleLimits, ToggleResult } from "../../shared/contracts";
import { config } from "../../shared/config";
import { itemKey, zeroCounts, type ToggleCounter } from "../../shared/counters";
import type { Context } from "hono";
import { formatCount } from "../../shared/format";
import { shownCount } from "../../shared/privacy";
import { ItemRef, type LikeResponse, type PendingToggleResponse, type SaveResponse } from "../../shared/schemas";
import { withRetries } from "../../shared/retries";
import { metrics } from "../../metrics/recorder";
import { freshCounts, lastKnownCounts, readCounts, rememberCounts, type Runtime } from "../reads/count-reader";
import { keepIntent, unreachable } from "./intents";
import { userLikes } from "../lib/objects";
import { enforceWriteLimits } from "../limits/edge-limits";
import { refused } from "../limits/refusals";
import { botScore, standingOf } from "../limits/standing";
import { tierLimits } from "../limits/tiers";
import { itemAccess } from "../privacy/access";
import { settingsForItem } from "./write-settings";
import { barred } from "../lib/errors";
import { readJson } from "../lib/validation";
import type { AppEnv } from "../types";
import { plainItemRef } from "../../shared/counts-request";
import { withAfterAnswer, type AfterAnswer } from "../lib/after-answer";

type ToggleStatus = LikeResponse["status"] | SaveResponse["status"] | PendingToggleResponse["status"];

export type ToggleOutcome = { status: ToggleStatus; count: number };

/** A toggle that could not reach the user's object in time: kept as an intent and applied later. */
const PENDING: ToggleOutcome = { status: "pending", count: 0 };

/** liked, already_liked, unliked, not_liked (saved, ... for saves): what dedup did with the call. */
function outcomeName(counter: ToggleCounter, on: boolean, changed: boolean): ToggleStatus {
  const done = counter === "likes" ? "liked" : "saved";
  if (on) return changed ? done : `already_${done}`;
  return changed ? `un${done}` : `not_${done}`;
}

/**
 * The handler of POST and DELETE /v1/like and /v1/save: one user's toggle,
 * answered with the status dedup decided, the count and its display form
 * (null when the owner hides it; 0 for an item the user may not see, which
 * only an unlike or unsave reaches: turning one on is refused first).
 */
export function toggleHandler(counter: ToggleCounter, on: boolean) {
  return (c: Context<AppEnv>) => withAfterAnswer(c.executionCtx, (after) => toggle(c, after, counter, on));
}

async function toggle(c: Context<AppEnv>, after: AfterAnswer, counter: ToggleCounter, on: boolean): Promise<Response> {
  const ref = await readJson(c, ItemRef, plainItemRef);
  await enforceWriteLimits(c);
  const rt = { env: c.env, ctx: c.executionCtx };
  const principal = c.get("principal");
  const standing = standingOf(principal, botScore(c.req.raw), config(c.env));
  const limits = standing ? tierLimits(counter, standing.share, config(c.env)) : undefined;
  const key = itemKey(ref.item_type, ref.item_id);
  const shown = await itemAccess(c.env, c.get("viewer"), await settingsForItem(rt, after, key), on ? "turn_on" : "turn_off");
  const outcome = await setToggle(rt, after, principal.userId, ref, counter, on, limits);
  if (outcome.status === "pending") return c.json({ status: "pending" } satisfies PendingToggleResponse, 202);
  const count = shownCount(outcome.count, shown);
  const flag = counter === "likes" ? "user_liked" : "user_saved";
  return c.json({ status: outcome.status, count, count_formatted: count === null ? null : formatCount(count), [flag]: on } as LikeResponse | SaveResponse);
}

/**
 * Sets one user's toggle (like or save) on an item through the user's object,
 * which answers once its own commit is durable and delivers to the item side
 * afterwards. So the count answered is the last total this Worker knew (its
 * memory, else one read) plus or minus the change, never below zero; a call
 * that changed nothing answers the last total known and, when that is no
 * longer fresh, reads the store after the answer.
 */
export async function setToggle(
  rt: Runtime,
  after: AfterAnswer,
  userId: string,
  ref: ItemRef,
  counter: ToggleCounter,
  on: boolean,
  limits?: ToggleLimits,
): Promise<ToggleOutcome> {
  const key = itemKey(ref.item_type, ref.item_id);
  const request = { user: userId, item: key, counter, on, askedAt: Date.now(), ...(limits ? { limits } : {}) };
  let result: ToggleResult;
  try {
    // Retried only while the object answers fast with a retryable error: past the deadline the intent is kept instead.
    result = await withRetries(async (): Promise<ToggleResult> => {
      try {
        return await userLikes(rt.env, userId, counter === "likes" ? "/v1/like" : "/v1/save").toggle(request);
      } catch (error) {
        throw unreachable(error) ? Object.assign(error as Error, { retryable: false }) : error;
      }
    });
  } catch (error) {
    if (!unreachable(error)) throw error;
    await keepIntent(rt.env, request);
    metrics.count("toggle_outcomes_total", { counter, outcome: "pending" });
    return PENDING;
  }
  if (result.kind === "barred") {
    metrics.count("toggle_outcomes_total", { counter, outcome: "barred" });
    throw barred();
  }
  if (result.kind === "rate_limited") {
    metrics.count("toggle_outcomes_total", { counter, outcome: "rate_limited" });
    throw refused(limits ? "reputation" : "user", "Too many requests for this user; retry later.", result.retryAfter);
  }
  // A call asked before the user's newest action on the edge (it hung meanwhile) changed nothing.
  const status = outcomeName(counter, on, result.kind === "changed");
  metrics.count("toggle_outcomes_total", { counter, outcome: status });
  switch (result.kind) {
    case "changed": {
      // Another toggle of this item may have updated what this isolate knows while the read was in flight.
      if (!lastKnownCounts(key)) await readCounts(rt, key, "write_answer", "critical").catch(() => undefined);
      const known = lastKnownCounts(key);
      const counts = { ...(known?.counts ?? zeroCounts()) };
      counts[counter] = Math.max(0, counts[counter] + (on ? 1 : -1));
      rememberCounts(rt, key, counts);
      return { status, count: counts[counter] };
    }
    case "unchanged":
    case "superseded": {
      const known = lastKnownCounts(key);
      if (!known) {
        const read = await readCounts(rt, key, "write_answer", "critical").catch(() => undefined);
        return { status, count: read?.counts[counter] ?? 0 };
      }
      if (!freshCounts(key)) after.add(() => readCounts(rt, key, "write_refresh"));
      return { status, count: known.counts[counter] };
    }
  }
}
