import { createMiddleware } from "hono/factory";
import { config } from "../../shared/config";
import type { AppEnv } from "../types";

const ALLOW_METHODS = "GET, POST, DELETE, OPTIONS";
const ALLOW_HEADERS = "Authorization, Content-Type, Idempotency-Key";
const EXPOSE_HEADERS = "Retry-After, X-Request-Id, X-Stale-Data";

function allowedOrigin(origin: string | undefined, configured: string | undefined): string | null {
  if (!origin) return null;
  const list = (configured ?? "").split(",").map((o) => o.trim()).filter(Boolean);
  if (list.includes("*")) return "*";
  return list.includes(origin) ? origin : null;
}

/**
 * CORS for browsers calling the API directly. Preflights are answered here
 * with 204; origins not in CORS_ORIGINS get no CORS headers at all, so the
 * browser refuses the call.
 */
export const cors = createMiddleware<AppEnv>(async (c, next) => {
  const origin = allowedOrigin(c.req.header("origin"), config(c.env).CORS_ORIGINS);
  const isPreflight = c.req.method === "OPTIONS" && c.req.header("access-control-request-method") !== undefined;
  if (isPreflight) {
    const headers = new Headers();
    if (origin) {
      headers.set("access-control-allow-origin", origin);
      headers.set("access-control-allow-methods", ALLOW_METHODS);
      headers.set("access-control-allow-headers", ALLOW_HEADERS);
      headers.set("access-control-max-age", "600");
      if (origin !== "*") headers.set("vary", "Origin");
    }
    return new Response(null, { status: 204, headers });
  }
  await next();
  if (origin) {
    c.res.headers.set("access-control-allow-origin", origin);
    c.res.headers.set("access-control-expose-headers", EXPOSE_HEADERS);
    if (origin !== "*") c.res.headers.append("vary", "Origin");
  }
});
