import { Hono, type Context } from "hono";
import type { EventPermit } from "../../shared/contracts";
import { itemKey, type EventCounter } from "../../shared/counters";
import { formatCount } from "../../shared/format";
import { withRetries } from "../../shared/retries";
import { IdempotencyKey, ItemRef, type EventResponse } from "../../shared/schemas";
import { bumpCounts, lastKnownCounts, readCounts } from "../lib/count-reader";
import { ApiError, invalid } from "../lib/errors";
import { recordEvent } from "../lib/event-buffer";
import { userLikes } from "../lib/objects";
import { readJson } from "../lib/validation";
import { requireUser } from "../middleware/auth";
import type { AppEnv } from "../types";
import { routeLabel } from "../metrics/route-label";

export const events = new Hono<AppEnv>();

async function countEvent(c: Context<AppEnv>, counter: EventCounter) {
  const ref = await readJson(c, ItemRef);
  const header = IdempotencyKey.safeParse(c.req.header("idempotency-key"));
  if (!header.success) {
    throw invalid("The Idempotency-Key header is invalid.", [
      { path: "headers.idempotency-key", message: header.error.issues[0]!.message },
    ]);
  }
  const { userId } = c.get("principal");
  const permit = await withRetries(async (): Promise<EventPermit> => await userLikes(c.env, userId, routeLabel(c)).allowEvent(counter));
  if (!permit.allowed) {
    throw new ApiError(429, "rate_limited", `Too many ${counter} from this user; retry later.`, {
      retryAfter: permit.retryAfter,
    });
  }
  const rt = { env: c.env, ctx: c.executionCtx };
  const key = itemKey(ref.item_type, ref.item_id);
  // Keys are scoped to the user and counter, so two users (or a view and a
  // share) can never cancel each other out by choosing the same key.
  const scopedKey = header.data === undefined ? undefined : `${counter}:${userId}:${header.data}`;
  await readCounts(rt, key).catch(() => undefined);
  const counted = recordEvent(rt, key, counter, scopedKey, counter === "views" ? userId : undefined);
  const count = counted ? bumpCounts(rt, key, counter, 1)[counter] : (lastKnownCounts(key)?.counts[counter] ?? 0);
  return c.json<EventResponse>({ status: "counted", count, count_formatted: formatCount(count) });
}

/** Count a view. Retried with the same Idempotency-Key within 24 hours, it counts once. */
events.post("/v1/view", requireUser, (c) => countEvent(c, "views"));

/** Count a share, with the same idempotency rule as views. */
events.post("/v1/share", requireUser, (c) => countEvent(c, "shares"));
