import { createMiddleware } from "hono/factory";
import { config } from "../../shared/config";
import { log } from "../../shared/log";
import { ApiError } from "../lib/errors";
import { routeLabel } from "../metrics/route-label";
import type { AppEnv } from "../types";

/** A caller's own request id is kept when it looks like one; anything else is replaced. */
const CALLER_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

function requestId(header: string | undefined): string {
  return header && CALLER_REQUEST_ID.test(header) ? header : crypto.randomUUID();
}

/**
 * Gives every request an id, returned as `X-Request-Id` (a caller's own id is
 * kept), and writes one JSON line for each server error (5xx) and for each
 * request slower than SLOW_REQUEST_MS. Client errors are counted in the
 * metrics, not logged one by one.
 */
export const requestLog = createMiddleware<AppEnv>(async (c, next) => {
  const id = requestId(c.req.header("x-request-id"));
  const started = Date.now();
  await next();
  c.res.headers.set("x-request-id", id);
  const durationMs = Date.now() - started;
  const status = c.res.status;
  const slow = durationMs > config(c.env).SLOW_REQUEST_MS;
  if (status < 500 && !slow) return;
  log(status >= 500 ? "error" : "warn", status >= 500 ? "request_failed" : "slow_request", {
    request_id: id,
    method: c.req.method,
    route: routeLabel(c),
    path: c.req.path,
    status,
    duration_ms: durationMs,
    ...(c.error ? { error: String((c.error as { message?: unknown }).message ?? c.error) } : {}),
    ...(c.error instanceof Error && !(c.error instanceof ApiError) ? { stack: c.error.stack } : {}),
  });
});
