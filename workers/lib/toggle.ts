import type { ToggleResult } from "../../shared/contracts";
import { itemKey, zeroCounts, type ToggleCounter } from "../../shared/counters";
import type { Context } from "hono";
import { formatCount } from "../../shared/format";
import { ItemRef, type LikeResponse, type SaveResponse } from "../../shared/schemas";
import { withRetries } from "../../shared/retries";
import { metrics } from "../../metrics/recorder";
import { ApiError } from "./errors";
import { lastKnownCounts, readCounts, rememberCounts, type Runtime } from "./count-reader";
import { userLikes } from "./objects";
import { readJson } from "./validation";
import type { AppEnv } from "../types";

type ToggleStatus = LikeResponse["status"] | SaveResponse["status"];

export type ToggleOutcome = { status: ToggleStatus; count: number };

/** liked, already_liked, unliked, not_liked (saved, ... for saves): what dedup did with the call. */
function outcomeName(counter: ToggleCounter, on: boolean, changed: boolean): ToggleStatus {
  const done = counter === "likes" ? "liked" : "saved";
  if (on) return changed ? done : `already_${done}`;
  return changed ? `un${done}` : `not_${done}`;
}

/**
 * The handler of POST and DELETE /v1/like and /v1/save: one user's toggle,
 * answered with the status dedup decided, the count and its display form.
 */
export function toggleHandler(counter: ToggleCounter, on: boolean) {
  return async (c: Context<AppEnv>) => {
    const ref = await readJson(c, ItemRef);
    const rt = { env: c.env, ctx: c.executionCtx };
    const { status, count } = await setToggle(rt, c.get("principal").userId, ref, counter, on);
    const flag = counter === "likes" ? "user_liked" : "user_saved";
    return c.json({ status, count, count_formatted: formatCount(count), [flag]: on } as LikeResponse | SaveResponse);
  };
}

/**
 * Sets one user's toggle (like or save) on an item through the user's object,
 * which answers once its own commit is durable and delivers to the item side
 * afterwards. So the count answered is the last total this Worker knew (its
 * memory, else one read) plus or minus the change, never below zero.
 */
export async function setToggle(
  rt: Runtime,
  userId: string,
  ref: ItemRef,
  counter: ToggleCounter,
  on: boolean,
): Promise<ToggleOutcome> {
  const key = itemKey(ref.item_type, ref.item_id);
  const result = await withRetries(
    async (): Promise<ToggleResult> => await userLikes(rt.env, userId).toggle({ user: userId, item: key, counter, on }),
  );
  if (result.kind === "rate_limited") {
    metrics.count("toggle_outcomes_total", { counter, outcome: "rate_limited" });
    throw new ApiError(429, "rate_limited", "Too many requests for this user; retry later.", {
      retryAfter: result.retryAfter,
    });
  }
  const status = outcomeName(counter, on, result.kind === "changed");
  metrics.count("toggle_outcomes_total", { counter, outcome: status });
  switch (result.kind) {
    case "changed": {
      // Another toggle of this item may have updated what this isolate knows while the read was in flight.
      if (!lastKnownCounts(key)) await readCounts(rt, key).catch(() => undefined);
      const known = lastKnownCounts(key);
      const counts = { ...(known?.counts ?? zeroCounts()) };
      counts[counter] = Math.max(0, counts[counter] + (on ? 1 : -1));
      rememberCounts(rt, key, counts, known?.asOf);
      return { status, count: counts[counter] };
    }
    case "unchanged": {
      const read = await readCounts(rt, key).catch(() => lastKnownCounts(key));
      return { status, count: read?.counts[counter] ?? 0 };
    }
  }
}
