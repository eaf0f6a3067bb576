import { Hono } from "hono";
import uplotJs from "uplot/dist/uPlot.iife.min.js";
import uplotCss from "uplot/dist/uPlot.min.css";
import template from "../dashboard/page.html";
import { evaluateAlerts } from "../../metrics/alerts";
import { overview } from "../../metrics/overview";
import { currentMetrics } from "../metrics/read";
import { requireService } from "../middleware/auth";
import type { AppEnv } from "../types";

export const dashboard = new Hono<AppEnv>();

/** The page and everything it runs is inline: it loads nothing but its own data from this Worker. */
const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "content-security-policy":
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; " +
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
};

let page: string | null = null;

/** The template with uPlot inlined; built once per isolate (function replacers, so `$` in the library stays literal). */
function dashboardPage(): string {
  page ??= template.replace("/*UPLOT_CSS*/", () => uplotCss).replace("/*UPLOT_JS*/", () => uplotJs);
  return page;
}

/** The live dashboard: public markup; its data needs a service token, asked for once per browser tab. */
dashboard.get("/dashboard", (c) => c.body(dashboardPage(), 200, PAGE_HEADERS));

/** The dashboard's data: recent rates, latencies, gauges, hot items and alert states. */
dashboard.get("/v1/admin/dashboard.json", requireService, async (c) => {
  const read = await currentMetrics(c.env);
  return c.json(overview(read, evaluateAlerts(read)), 200, { "cache-control": "no-store" });
});
