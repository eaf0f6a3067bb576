import { Hono } from "hono";
import { config } from "../../shared/config";
import { createMiddleware } from "hono/factory";
import { evaluateAlerts } from "../../metrics/alerts";
import { EXPOSITION_CONTENT_TYPE, renderExposition } from "../../metrics/exposition";
import { currentMetrics } from "../metrics/read";
import { requireService } from "../middleware/auth";
import type { AppEnv } from "../types";

export const metricsRoute = new Hono<AppEnv>();

/** A service token, unless METRICS_PUBLIC is "true" (for a scraper on a private network). */
const metricsAccess = createMiddleware<AppEnv>(async (c, next) => {
  if (config(c.env).METRICS_PUBLIC) return await next();
  return await requireService(c, next);
});

/** Prometheus scrape target: every isolate's metrics, merged, and the alert gauges. */
metricsRoute.get("/metrics", metricsAccess, async (c) => {
  const read = await currentMetrics(c.env);
  return c.body(renderExposition(read.totals, evaluateAlerts(read)), 200, {
    "content-type": EXPOSITION_CONTENT_TYPE,
    "cache-control": "no-store",
  });
});
