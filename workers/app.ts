import { Hono } from "hono";
import { isRetryable } from "../shared/retries";
import { ApiError, unavailable } from "./lib/errors";
import { requestMetrics } from "./metrics/request-metrics";
import { cors } from "./middleware/cors";
import { requestLog } from "./middleware/request-log";
import { admin } from "./routes/admin";
import { blocks } from "./routes/blocks";
import { removal } from "./routes/removal";
import { counts } from "./routes/counts";
import { dashboard } from "./routes/dashboard";
import { docs } from "./routes/docs";
import { events } from "./routes/events";
import { hasLiked } from "./routes/has-liked";
import { history } from "./routes/history";
import { itemSettings } from "./routes/item-settings";
import { health } from "./routes/health";
import { likersRoute } from "./routes/likers";
import { likes } from "./routes/likes";
import { live } from "./routes/live";
import { metricsRoute } from "./routes/metrics";
import { importRoute } from "./routes/import";
import { rebuildRoute } from "./routes/rebuild";
import { reshardRoute } from "./routes/reshard";
import { openapi } from "./routes/openapi";
import { ownLikesRoute } from "./routes/own-likes";
import { saves } from "./routes/saves";
import type { AppEnv } from "./types";

const app = new Hono<AppEnv>();

app.use("*", requestLog);
app.use("*", requestMetrics);
app.use("*", cors);
app.route("/", health);
app.route("/", likes);
app.route("/", saves);
app.route("/", events);
app.route("/", counts);
app.route("/", hasLiked);
app.route("/", likersRoute);
app.route("/", ownLikesRoute);
app.route("/", importRoute);
app.route("/", rebuildRoute);
app.route("/", reshardRoute);
app.route("/", admin);
app.route("/", itemSettings);
app.route("/", blocks);
app.route("/", removal);
app.route("/", openapi);
app.route("/", docs);
app.route("/", metricsRoute);
app.route("/", dashboard);
app.route("/", live);
app.route("/", history);

/** A known path asked with another method is a 405 naming the methods it has; anything else a 404. */
function allowedMethods(path: string): string[] {
  const methods = new Set<string>();
  for (const route of app.routes) {
    if (route.method === "ALL") continue;
    const pattern = new RegExp(`^${route.path.replace(/:[^/]+/g, "[^/]+")}$`);
    if (pattern.test(path)) methods.add(route.method);
  }
  if (methods.has("GET")) methods.add("HEAD");
  return [...methods].sort();
}

app.notFound((c) => {
  const allow = allowedMethods(c.req.path);
  if (allow.length === 0) return new ApiError(404, "not_found", `No such endpoint: ${c.req.path}.`).toResponse();
  return new ApiError(405, "method_not_allowed", `${c.req.method} is not allowed here; use ${allow.join(", ")}.`, {
    headers: { allow: [...allow, "OPTIONS"].join(", ") },
  }).toResponse();
});

/**
 * The one place every failure becomes the JSON error shape; no stack leaves
 * the Worker (the request log writes it, with the request id).
 */
app.onError((error: unknown) => {
  if (error instanceof ApiError) return error.toResponse();
  if ((error as { overloaded?: boolean } | null)?.overloaded || isRetryable(error)) return unavailable("The service is busy; retry shortly.").toResponse();
  return new ApiError(500, "internal_error", "Something went wrong on our side.").toResponse();
});

export { app };
