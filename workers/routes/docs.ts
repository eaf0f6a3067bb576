import { Hono } from "hono";
import type { AppEnv } from "../types";

export const docs = new Hono<AppEnv>();

/**
 * The page's scripts and styles are static assets (public/docs/): Swagger UI
 * copied from node_modules by scripts/docs-assets.mjs, and the page's own
 * start-up script. Nothing comes from a CDN, so the page works offline.
 */
const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>plaudit API reference</title>
  <link rel="icon" type="image/png" href="/docs/vendor/favicon-32x32.png">
  <link rel="stylesheet" href="/docs/vendor/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/vendor/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

/** Only this origin: the page must never reach the network beyond the API it documents. */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
].join("; ");

/** The interactive API reference. */
docs.get("/docs", (c) => c.html(PAGE, 200, { "content-security-policy": CSP }));
