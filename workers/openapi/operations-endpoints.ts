/**
 * The endpoints operators and tools use (health, the API document and its
 * page, metrics, the dashboard), as entries of the OpenAPI registry.
 */
import { z } from "zod";
import { DashboardData, HealthResponse, OpenApiDocumentResponse } from "../../shared/schemas";
import type { Endpoint } from "./endpoint";

const AS_OF = "2026-11-30T09:00:00.000Z";

export const OPERATIONS_ENDPOINTS: readonly Endpoint[] = [
  {
    method: "get",
    path: "/healthz",
    operationId: "health",
    tag: "meta",
    summary: "Liveness",
    description: "The Worker is up; touches no object or store.",
    auth: "none",
    response: { description: "Up.", schema: HealthResponse, examples: { ok: { status: "ok" } } },
  },
  {
    method: "get",
    path: "/openapi.json",
    operationId: "openapi",
    tag: "meta",
    summary: "This OpenAPI document",
    auth: "none",
    response: {
      description: "The OpenAPI 3.1 document of the API.",
      schema: OpenApiDocumentResponse,
      examples: { outline: { openapi: "3.1.0", info: { title: "plaudit", version: "1" }, paths: {} } },
    },
  },
  {
    method: "get",
    path: "/docs",
    operationId: "docs",
    tag: "meta",
    summary: "Interactive API reference",
    description: "An HTML page that renders this document; its scripts and styles are served by the Worker, so it works offline.",
    auth: "none",
    response: {
      description: "The reference page.",
      schema: z.string(),
      contentType: "text/html",
      examples: { page: "<!doctype html>..." },
    },
  },
  {
    method: "get",
    path: "/metrics",
    operationId: "metrics",
    tag: "admin",
    summary: "Prometheus metrics",
    description:
      "Every isolate's metrics, merged, in the Prometheus text format (names prefixed `plaudit_`), and `plaudit_alert{name}` gauges. Open to anyone when METRICS_PUBLIC is true. See docs/operations.md.",
    auth: "service",
    response: {
      description: "The text exposition format 0.0.4.",
      schema: z.string(),
      contentType: "text/plain; version=0.0.4",
      examples: { counter: '# HELP plaudit_requests_total Requests answered.\n# TYPE plaudit_requests_total counter\n...' },
    },
    errors: [503],
  },
  {
    method: "get",
    path: "/dashboard",
    operationId: "dashboard",
    tag: "admin",
    summary: "Live dashboard",
    description: "A self-contained HTML page; it asks for a service token once and polls GET /v1/admin/dashboard.json every 2 s.",
    auth: "none",
    response: { description: "The dashboard page.", schema: z.string(), contentType: "text/html", examples: { page: "<!doctype html>..." } },
  },
  {
    method: "get",
    path: "/v1/admin/dashboard.json",
    operationId: "dashboardData",
    tag: "admin",
    summary: "The dashboard's data",
    description: "Rates over the last 10 to 15 seconds, latencies, gauges, the ten hottest items and the alert states.",
    auth: "service",
    response: {
      description: "The current picture.",
      schema: DashboardData,
      examples: {
        quiet: {
          as_of: AS_OF,
          window_seconds: 12.5,
          likes_per_second: 40.2,
          unlikes_per_second: 3.1,
          reads_per_second: 410,
          error_rate: 0,
          write_latency_ms: { p50: 7.5, p99: 31 },
          read_latency_ms: { p50: 1.2, p99: 6.4 },
          cache_hit_rate: 0.97,
          dedup_rate: 0.04,
          rate_limited_per_second: 0,
          queue_lag_seconds: null,
          drift_ratio: null,
          hot_item_count: 0,
          hot_items: [],
          headroom: { queue_sends_per_second: 45.3, d1_queries_per_second: 12.8, d1_largest_database_bytes: 1_250_000_000, objects_overloaded: 0 },
          breakers: [
            { dependency: "central_store", open: false },
            { dependency: "d1:DB", open: false },
          ],
          passes: [{ pass: "reconcile", ranges: 64, ranges_done: 17, items: 1_250_000, items_per_second: 410 }],
          alerts: [
            { name: "like_latency_p99", summary: "Like p99 latency is over 100 ms.", threshold: 0.1, value: 0.031, firing: false },
          ],
        },
      },
    },
    errors: [503],
  },];
