import { Hono, type Context } from "hono";
import { config } from "../../shared/config";
import { ANONYMOUS_LIVE, LIVE_VIEWER_HEADER, MAX_LIVE_GRANT_OWNERS, type LiveViewer } from "../../shared/live-viewer";
import { ApiError, unauthorized, unavailable } from "../lib/errors";
import { liveHub } from "../lib/objects";
import { optionalUser } from "../middleware/auth";
import { readLimit } from "../middleware/read-limit";
import { GRANT_HEADER, verifyGrant } from "../privacy/grant";
import type { AppEnv, Principal } from "../types";
import page from "../live/page.html";

export const live = new Hono<AppEnv>();

/** A full hub answers 503; another random hub is tried, a few times at most. */
const HUB_ATTEMPTS = 3;

/**
 * The socket's viewer, checked as a read's is (docs/privacy.md): the token's
 * user, and the owners the host app's grant names until it expires. The
 * grant is kept in the socket's hibernation attachment, hence its bound.
 */
async function liveViewer(c: Context<AppEnv>): Promise<LiveViewer> {
  const principal = c.get("principal") as Principal | undefined;
  const grant = c.req.header(GRANT_HEADER);
  if (!principal) {
    if (grant) throw unauthorized(`An ${GRANT_HEADER} header needs the Authorization: Bearer token of the user it names.`);
    return ANONYMOUS_LIVE;
  }
  if (!grant) return { userId: principal.userId, followersOf: [], grantUntil: 0 };
  const { owners, expiresAt } = await verifyGrant(grant, c.env, principal.userId, Date.now());
  if (owners.size > MAX_LIVE_GRANT_OWNERS) throw unauthorized(`A live socket's ${GRANT_HEADER} may name at most ${MAX_LIVE_GRANT_OWNERS} owners.`);
  return { userId: principal.userId, followersOf: [...owners], grantUntil: expiresAt };
}

/**
 * Opens a live socket. Public: without a token the socket's viewer is
 * anonymous; with one (and a grant) it is that user, and the hub applies the
 * privacy rules per item and per socket (docs/live.md). Opening counts
 * against the per-address read limit. The socket lands on a random hub of
 * LIVE_HUBS, so a million watchers of one item spread evenly over them
 * (about 15,600 each at the default 64) and none nears the 32,768 sockets an
 * object may hold.
 */
live.get("/v1/live", readLimit, optionalUser, async (c) => {
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
    throw new ApiError(426, "upgrade_required", "This endpoint is a WebSocket: send Upgrade: websocket.", {
      headers: { upgrade: "websocket" },
    });
  }
  // The viewer reaches the hub in a header only the Worker sets: a client's own is replaced.
  const headers = new Headers(c.req.raw.headers);
  headers.set(LIVE_VIEWER_HEADER, JSON.stringify(await liveViewer(c)));
  const request = new Request(c.req.raw, { headers });
  const hubs = config(c.env).LIVE_HUBS;
  for (let attempt = 0; attempt < HUB_ATTEMPTS; attempt++) {
    const response = await liveHub(c.env, Math.floor(Math.random() * hubs), "/v1/live").fetch(request);
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
