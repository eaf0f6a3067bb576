import { Hono } from "hono";
import { config } from "../../shared/config";
import { ApiError, unavailable } from "../lib/errors";
import { liveHub } from "../lib/objects";
import { readLimit } from "../middleware/read-limit";
import type { AppEnv } from "../types";
import page from "../live/page.html";

export const live = new Hono<AppEnv>();

/** A full hub answers 503; another random hub is tried, a few times at most. */
const HUB_ATTEMPTS = 3;

/**
 * Opens a live socket. Public: counts are public, privacy rules apply per
 * item in the hub, and opening counts against the per-address read limit.
 * The socket lands on a random hub of LIVE_HUBS, so a million watchers of one
 * item spread evenly over them (about 15,600 each at the default 64) and none
 * nears the 32,768 sockets an object may hold.
 */
live.get("/v1/live", readLimit, async (c) => {
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
    throw new ApiError(426, "upgrade_required", "This endpoint is a WebSocket: send Upgrade: websocket.", {
      headers: { upgrade: "websocket" },
    });
  }
  const hubs = config(c.env).LIVE_HUBS;
  for (let attempt = 0; attempt < HUB_ATTEMPTS; attempt++) {
    const response = await liveHub(c.env, Math.floor(Math.random() * hubs), "/v1/live").fetch(c.req.raw);
    // A new response: the hub's has immutable headers, and the middleware adds the request id.
    if (response.status === 101) return new Response(null, { status: 101, webSocket: response.webSocket });
  }
  throw unavailable("Every live hub tried is full; retry shortly.");
});

const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy":
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'",
  "x-content-type-options": "nosniff",
};

/** A demo page: a few items' counts moving over one live socket. Inline, so it loads nothing from elsewhere. */
live.get("/live", () => new Response(page, { headers: PAGE_HEADERS }));
