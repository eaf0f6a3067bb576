import { Hono, type Context } from "hono";
import type { EventPermit } from "../../shared/contracts";
import { itemKey, type EventCounter } from "../../shared/counters";
import { formatCount } from "../../shared/format";
import { shownCount } from "../../shared/privacy";
import { withRetries } from "../../shared/retries";
import { IdempotencyKey, ItemRef, type EventResponse } from "../../shared/schemas";
import { bumpCounts, lastKnownCounts, readCounts } from "../reads/count-reader";
import { ApiError, invalid } from "../lib/errors";
import { recordEvent } from "../likes/event-buffer";
import { userLikes } from "../lib/objects";
import { readJson } from "../lib/validation";
import { requireUser } from "../middleware/auth";
import { identifyViewer } from "../middleware/viewer";
import { itemAccess } from "../privacy/access";
import { settingsForItem } from "../likes/write-settings";
import type { AppEnv } from "../types";
import { routeLabel } from "../metrics/route-label";
import { plainItemRef } from "../../shared/counts-request";
import { withAfterAnswer, type AfterAnswer } from "../lib/after-answer";

export const events = new Hono<AppEnv>();

async function countEvent(c: Context<AppEnv>, after: AfterAnswer, counter: EventCounter) {
  const ref = await readJson(c, ItemRef, plainItemRef);
  const header = IdempotencyKey.safeParse(c.req.header("idempotency-key"));
  if (!header.success) {
    throw invalid("The Idempotency-Key header is invalid.", [
      { path: "headers.idempotency-key", message: header.error.issues[0]!.message },
    ]);
  }
  const { userId } = c.get("principal");
  const key = itemKey(ref.item_type, ref.item_id);
  const rt = { env: c.env, ctx: c.executionCtx };
  const shown = await itemAccess(c.env, c.get("viewer"), await settingsForItem(rt, after, key), "event");
  const permit = await withRetries(async (): Promise<EventPermit> => await userLikes(c.env, userId, routeLabel(c)).allowEvent(counter));
  if (!permit.allowed) {
    throw new ApiError(429, "rate_limited", `Too many ${counter} from this user; retry later.`, {
      retryAfter: permit.retryAfter,
    });
  }
  // Keys are scoped to the user and counter, so two users (or a view and a
  // share) can never cancel each other out by choosing the same key.
  const scopedKey = header.data === undefined ? undefined : `${counter}:${userId}:${header.data}`;
  await readCounts(rt, key, "write_answer", "critical").catch(() => undefined);
  const counted = recordEvent(rt, key, counter, scopedKey, counter === "views" ? userId : undefined);
  const total = counted ? bumpCounts(rt, key, counter, 1)[counter] : (lastKnownCounts(key)?.counts[counter] ?? 0);
  const count = shownCount(total, shown);
  return c.json<EventResponse>({ status: "counted", count, count_formatted: count === null ? null : formatCount(count) });
}

/**
 * Count a view. Retried with the same Idempotency-Key within 24 hours, it
 * counts once. A view of an item the user may not see is refused (404).
 */
events.post("/v1/view", requireUser, identifyViewer, (c) => withAfterAnswer(c.executionCtx, (after) => countEvent(c, after, "views")));

/** Count a share, with the same idempotency rule as views. */
events.post("/v1/share", requireUser, identifyViewer, (c) => withAfterAnswer(c.executionCtx, (after) => countEvent(c, after, "shares")));
