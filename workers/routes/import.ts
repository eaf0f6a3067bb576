import { Hono } from "hono";
import { config } from "../../shared/config";
import { itemKey } from "../../shared/counters";
import type { ImportedEdge, ImportOutcome } from "../../shared/contracts";
import { ImportRequest, type ImportResponse } from "../../shared/import";
import { log } from "../../shared/log";
import { withRetries } from "../../shared/retries";
import { metrics } from "../../metrics/recorder";
import { backlogRetryAfter, queueBacklog } from "../pipeline/import-pressure";
import { ApiError } from "../lib/errors";
import { userLikes } from "../lib/objects";
import { readJson } from "../lib/validation";
import { routeLabel } from "../metrics/route-label";
import { requireService } from "../middleware/auth";
import { settleAll } from "../../shared/settle";
import type { AppEnv } from "../types";

export const importRoute = new Hono<AppEnv>();

const slowDown = (reason: string, message: string, retryAfter: number) => {
  metrics.count("import_backpressure_total", { reason });
  return new ApiError(503, "import_backpressure", message, { retryAfter });
};

/**
 * A batch of like edges from another system (service token), each through
 * its user's object like a live like (then the item side, D1 and the central
 * store follow), carrying its target state and time (invariant I6).
 *
 * Backpressure: the call is refused with 503 and a Retry-After, before any
 * edge is applied, while the event queues hold more than
 * IMPORT_MAX_QUEUE_BACKLOG messages; and when a user object fails (overload,
 * storage), after the edges of the users that succeeded were committed. A
 * retried call is harmless either way, as each edge is idempotent (a repeat
 * answers `duplicate`). At most IMPORT_USER_CONCURRENCY user objects are
 * called at once, and the answer waits until their items took the edges.
 */
importRoute.post("/v1/admin/import", requireService, async (c) => {
  const { edges } = await readJson(c, ImportRequest);
  const settings = config(c.env);
  const backlog = await queueBacklog(c.env).catch((error: unknown) => {
    log("warn", "import_backlog_unread", { error: String(error) });
    return null;
  });
  // Without the figure the import goes on, paced by the object errors it meets; the log says the check was off.
  if (backlog === null) log("warn", "import_backlog_unknown", {});
  if (backlog !== null && backlog > settings.IMPORT_MAX_QUEUE_BACKLOG) {
    throw slowDown(
      "queue_backlog",
      `The event queues hold ${backlog} messages (the import waits below ${settings.IMPORT_MAX_QUEUE_BACKLOG}); send this batch again later.`,
      backlogRetryAfter(backlog, settings.IMPORT_MAX_QUEUE_BACKLOG),
    );
  }
  const byUser = new Map<string, { index: number; edge: ImportedEdge }[]>();
  edges.forEach((edge, index) => {
    const list = byUser.get(edge.user_id) ?? [];
    list.push({ index, edge: { item: itemKey(edge.item_type, edge.item_id), on: edge.kind === "like", at: edge.liked_at } });
    byUser.set(edge.user_id, list);
  });
  const results: ImportOutcome[] = new Array<ImportOutcome>(edges.length);
  const calls = await settleAll([...byUser], settings.IMPORT_USER_CONCURRENCY, async ([user, list]) => {
    const stub = userLikes(c.env, user, routeLabel(c));
    const outcomes = await withRetries(() => stub.importEdges(user, list.map((entry) => entry.edge)));
    list.forEach((entry, i) => (results[entry.index] = outcomes[i]!));
    // The answer waits for the item side (the importer's pace), up to the
    // call's deadline; past it the outbox finishes the deliveries on its own.
    await stub.importsDelivered().catch((error: unknown) => log("warn", "import_delivery_slow", { error: String(error) }));
  });
  const failure = calls.find((call) => call.status === "rejected");
  if (failure) {
    log("warn", "import_object_failed", { error: String(failure.reason) });
    throw slowDown("object_error", "A user object could not take its edges; send this batch again later (edges already applied answer duplicate).", 2);
  }
  for (const outcome of results) metrics.count("import_edges_total", { outcome });
  return c.json<ImportResponse>({ results });
});
