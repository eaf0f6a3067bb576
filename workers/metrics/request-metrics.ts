import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { ApiError } from "../lib/errors";
import type { AppEnv } from "../types";
import { scheduleFlush } from "../../metrics/flush";
import { metrics } from "../../metrics/recorder";
import { routeLabel } from "./route-label";

/** The `error` code of an error answer: from the ApiError that made it, else from its JSON body. */
async function errorCode(c: Context<AppEnv>): Promise<string> {
  if (c.error instanceof ApiError) return c.error.code;
  const body = (await c.res
    .clone()
    .json()
    .catch(() => null)) as { error?: unknown } | null;
  return typeof body?.error === "string" ? body.error : `http_${c.res.status}`;
}

/**
 * Counts every request by route, method and status, times it per route, and
 * counts error answers by code and rate-limit refusals; then lets the flusher
 * send it all off the request's path.
 */
export const requestMetrics = createMiddleware<AppEnv>(async (c, next) => {
  const started = Date.now();
  await next();
  const route = routeLabel(c);
  const method = c.req.method;
  const status = c.res.status;
  metrics.count("requests_total", { route, method, status: String(status) });
  metrics.observe("request_duration_seconds", { route, method }, (Date.now() - started) / 1000);
  if (status >= 400) metrics.count("errors_total", { code: await errorCode(c) });
  if (status === 429) metrics.count("rate_limited_total", { route });
  scheduleFlush(c.env, c.executionCtx);
});
