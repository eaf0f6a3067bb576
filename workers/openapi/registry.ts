/**
 * The API's endpoints, one entry each: the OpenAPI document (`GET /openapi.json`,
 * `docs/openapi.json`) is generated from this list and the zod schemas it names.
 *
 * Adding an endpoint? Write the Hono route as usual, then add ONE entry here
 * (or in a list of related endpoints spread into ENDPOINTS, as PRIVACY_ENDPOINTS):
 * method, path in OpenAPI syntax (`{id}`, not `:id`), auth, the schemas the
 * route validates with and answers with (export them from shared/schemas.ts:
 * exported schemas become named components), and an example of each. Errors
 * implied by auth, params, query and body are added for you; list only the
 * others (`errors: [429, 503]`). Then run `npm run openapi` and commit
 * docs/openapi.json. test/workers/openapi.test.ts fails while a route of the
 * app has no entry here (or an entry names a route the app lacks), and while
 * docs/openapi.json is stale. See docs/api-reference.md.
 */
import { z } from "zod";
import {
  AdminItemParams,
  AdminItemResponse,
  AdminUserParams,
  AdminUserResponse,
  CountQuery,
  CountResponse,
  CountsRequest,
  CountsResponse,
  EventResponse,
  HasLikedRequest,
  HasLikedResponse,
  HistoryQuery,
  HistoryResponse,
  ItemRef,
  LikeResponse,
  PendingToggleResponse,
  SaveResponse,
} from "../../shared/schemas";
import { config } from "../../shared/config";
import { limitsView } from "../limits/tiers";
import { LiveServerMessage } from "../../shared/live";
import type { Endpoint } from "./endpoint";
import { DATA_ENDPOINTS } from "./data-endpoints";
import { HOT_ENDPOINTS } from "./hot-endpoints";
import { OPERATIONS_ENDPOINTS } from "./operations-endpoints";
import { PRIVACY_ENDPOINTS } from "./privacy-endpoints";
import { REMOVAL_ENDPOINTS } from "./removal-endpoints";

const AS_OF = "2026-11-30T09:00:00.000Z";

const ITEM_BODY = { schema: ItemRef, examples: { post: { item_id: "456", item_type: "post" } } };

/** A toggle the user's object could not take in time: kept as an intent (docs/api.md, "Pending toggles"). */
const PENDING = {
  description:
    "The user's object could not be reached in time: the change is kept as an intent and applied once the object is back, unless the user acted on the item since (the newer action wins) or a limit refuses it then. `has_liked` shows the outcome.",
  schema: PendingToggleResponse,
  examples: { pending: { status: "pending" } },
};

export const ENDPOINTS: readonly Endpoint[] = [
  {
    method: "post",
    path: "/v1/like",
    operationId: "like",
    tag: "likes",
    summary: "Like an item",
    description:
      "Counts once per user, ever: a repeat answers `already_liked` and counts nothing. `count` is the item's total after this change; null when the item's owner hides its counts. An item the user may not see, or whose owner blocks the user, is 404 `not_found`. Every validated call counts against the user's rate limit.",
    auth: "user",
    body: ITEM_BODY,
    response: {
      description: "The like is recorded (or already was).",
      schema: LikeResponse,
      examples: {
        liked: { status: "liked", count: 1524, count_formatted: "1.5K", user_liked: true },
        already_liked: { status: "already_liked", count: 1524, count_formatted: "1.5K", user_liked: true },
      },
    },
    viewer: true,
    accepted: PENDING,
    errors: [403, 404, 429, 503],
  },
  {
    method: "delete",
    path: "/v1/like",
    operationId: "unlike",
    tag: "likes",
    summary: "Unlike an item",
    description: "A repeat, or an unlike of something never liked, answers `not_liked`. Counts against the rate limit like a like.",
    auth: "user",
    body: ITEM_BODY,
    response: {
      description: "The like is removed (or there was none).",
      schema: LikeResponse,
      examples: {
        unliked: { status: "unliked", count: 1523, count_formatted: "1.5K", user_liked: false },
        not_liked: { status: "not_liked", count: 1523, count_formatted: "1.5K", user_liked: false },
      },
    },
    viewer: true,
    accepted: PENDING,
    errors: [429, 503],
  },
  {
    method: "post",
    path: "/v1/save",
    operationId: "save",
    tag: "saves",
    summary: "Save an item",
    description:
      "A per-user toggle exactly like a like: counts once per user, a repeat answers `already_saved`. Saves have their own rate limit (`SAVE_RATE_LIMIT_PER_MINUTE`, `SAVE_RATE_LIMIT_PER_DAY`).",
    auth: "user",
    body: ITEM_BODY,
    response: {
      description: "The save is recorded (or already was).",
      schema: SaveResponse,
      examples: {
        saved: { status: "saved", count: 3, count_formatted: "3", user_saved: true },
        already_saved: { status: "already_saved", count: 3, count_formatted: "3", user_saved: true },
      },
    },
    viewer: true,
    accepted: PENDING,
    errors: [403, 404, 429, 503],
  },
  {
    method: "delete",
    path: "/v1/save",
    operationId: "unsave",
    tag: "saves",
    summary: "Unsave an item",
    description: "A repeat, or an unsave of something never saved, answers `not_saved`.",
    auth: "user",
    body: ITEM_BODY,
    response: {
      description: "The save is removed (or there was none).",
      schema: SaveResponse,
      examples: {
        unsaved: { status: "unsaved", count: 2, count_formatted: "2", user_saved: false },
        not_saved: { status: "not_saved", count: 2, count_formatted: "2", user_saved: false },
      },
    },
    viewer: true,
    accepted: PENDING,
    errors: [429, 503],
  },
  {
    method: "post",
    path: "/v1/view",
    operationId: "view",
    tag: "events",
    summary: "Count a view",
    description:
      "A plain event count. Send an `Idempotency-Key` header (1 to 255 visible ASCII characters): a retry with the same key within 24 hours counts once. Views are added up at the edge and reach the item about once a second; `count` includes this view. Limited per user by `VIEW_RATE_LIMIT_PER_MINUTE`.",
    auth: "user",
    idempotencyKey: true,
    body: ITEM_BODY,
    response: {
      description: "The view is counted.",
      schema: EventResponse,
      examples: { counted: { status: "counted", count: 89234, count_formatted: "89.2K" } },
    },
    viewer: true,
    errors: [404, 429, 503],
  },
  {
    method: "post",
    path: "/v1/share",
    operationId: "share",
    tag: "events",
    summary: "Count a share",
    description:
      "Like a view, with its own per-user limit (`SHARE_RATE_LIMIT_PER_MINUTE`) and the same `Idempotency-Key` rule.",
    auth: "user",
    idempotencyKey: true,
    body: ITEM_BODY,
    response: {
      description: "The share is counted.",
      schema: EventResponse,
      examples: { counted: { status: "counted", count: 156, count_formatted: "156" } },
    },
    viewer: true,
    errors: [404, 429, 503],
  },
  {
    method: "get",
    path: "/v1/count",
    operationId: "count",
    tag: "counts",
    summary: "One item's counts",
    description:
      "All four counters of an item. An item nobody touched has all counts 0 (not a 404), and so has an item the viewer may not see: the whole answer (fields, `cached`, `as_of`, headers, errors) is an untouched item's, and for it and for hidden counts `as_of` is when the store was read. A bearer token is optional: with one, the owner reads counts they hide from others (null for everyone else). With `unique_viewers=true`, `counts` also has `unique_viewers`: distinct users who viewed the item, a HyperLogLog estimate (0.81 % standard error) as of the item's last snapshot in the regional store (a second or two behind); 0 for an item the viewer may not see, null where the counts are hidden.",
    auth: "none",
    query: { schema: CountQuery, example: { item_id: "456", item_type: "post" } },
    response: {
      description: "The item's counts.",
      schema: CountResponse,
      examples: {
        post: {
          item_id: "456",
          item_type: "post",
          counts: { likes: 1524, views: 89234, shares: 156, saves: 3 },
          cached: true,
          as_of: AS_OF,
        },
      },
    },
    viewer: true,
    errors: [503],
  },
  {
    method: "post",
    path: "/v1/counts",
    operationId: "counts",
    tag: "counts",
    summary: "Counts of up to 100 items",
    description:
      "A repeated item is answered once, keyed `item_type:item_id`. `counter_types` filters (all four when absent); `unique_viewers: true` adds each item's unique viewers, as on GET /v1/count. Items that cannot be read are `null` and the answer has `partial: true`; 503 only when every item failed.",
    auth: "none",
    body: {
      schema: CountsRequest,
      examples: {
        feed: {
          items: [
            { item_id: "1", item_type: "post" },
            { item_id: "2", item_type: "reel" },
          ],
          counter_types: ["likes", "views"],
        },
      },
    },
    response: {
      description: "Counts by item key.",
      schema: CountsResponse,
      examples: {
        feed: { counts: { "post:1": { likes: 1524, views: 89234 }, "reel:2": { likes: 7, views: 120 } }, took_ms: 12 },
        partial: { counts: { "post:1": { likes: 1524, views: 89234 }, "reel:2": null }, took_ms: 40, partial: true },
      },
    },
    viewer: true,
    errors: [503],
  },
  {
    method: "post",
    path: "/v1/has_liked",
    operationId: "hasLiked",
    tag: "likes",
    summary: "Which items the caller likes",
    description:
      "Exact, from the caller's own likes: never a false positive. An item the caller may not see answers false. A like or unlike the caller made that was accepted as pending (202) answers at once as if applied, its id listed in `pending` until the user's object applies it (read-your-writes).",
    auth: "user",
    body: { schema: HasLikedRequest, examples: { two: { item_ids: ["1", "2"], item_type: "post" } } },
    response: {
      description: "One boolean per distinct id.",
      schema: HasLikedResponse,
      examples: { two: { liked: { "1": true, "2": false } }, pending: { liked: { "1": true, "2": false }, pending: ["1"] } },
    },
    viewer: true,
    errors: [503],
  },
  {
    method: "get",
    path: "/v1/admin/users/{user_id}",
    operationId: "adminUser",
    tag: "admin",
    summary: "A user's undelivered changes and limits",
    description:
      "Operators' view of one user: edges whose newest change the item side has not yet acknowledged, the per-user limits that can be in force (standard and each standing tier) and what selects them.",
    auth: "service",
    params: { schema: AdminUserParams, example: { user_id: "42" } },
    response: {
      description: "The user's delivery backlog and limits.",
      schema: AdminUserResponse,
      examples: { settled: { user_id: "42", pending_deliveries: 0, limits: limitsView(config({})) } },
    },
    errors: [503],
  },
  {
    method: "get",
    path: "/v1/admin/items/{item_type}/{item_id}",
    operationId: "adminItem",
    tag: "admin",
    summary: "An item's counts and hot-item state",
    description:
      "Operators' view of one item: its counts, whether it is hot (new likes and saves go to its children), its N, each child's last report and its recent write rate.",
    auth: "service",
    params: { schema: AdminItemParams, example: { item_type: "post", item_id: "456" } },
    response: {
      description: "The item's state.",
      schema: AdminItemResponse,
      examples: {
        hot: {
          item_id: "456",
          item_type: "post",
          counts: { likes: 120034, views: 3400210, shares: 5120, saves: 880 },
          seq: 48211,
          hot: true,
          shards: 16,
          children: [{ index: 0, likes: 7410, saves: 52, seq: 913, writes: 8120, reported_at: AS_OF }],
          writes_per_sec: 1840.5,
          calls: { applies: 2210, refused: 35, reports: 14400, reads: 900, commits: 3100 },
        },
      },
    },
    errors: [503],
  },
  {
    method: "get",
    path: "/v1/history",
    operationId: "history",
    tag: "counts",
    summary: "An item's daily counts",
    description:
      "One entry per UTC day, oldest first, today last: each count's change that day (likes and saves are net: unlikes and unsaves subtract) and the totals at the day's end. Kept in D1 by the event pipeline, so today's entry is a second or two behind. An item nobody touched answers zeros, and so does an item the viewer may not see; where the owner hides the counts, every number is null but for the owner. A bearer token (and `X-Plaudit-Grant`) is optional, as on GET /v1/count.",
    auth: "none",
    viewer: true,
    query: { schema: HistoryQuery, example: { item_id: "456", item_type: "post", days: "2" } },
    response: {
      description: "The item's days.",
      schema: HistoryResponse,
      examples: {
        two_days: {
          item_id: "456",
          item_type: "post",
          days: [
            { date: "2026-11-29", likes: 12, saves: 0, views: 340, shares: 2, totals: { likes: 1510, saves: 3, views: 88900, shares: 154 } },
            { date: "2026-11-30", likes: 14, saves: 0, views: 334, shares: 2, totals: { likes: 1524, saves: 3, views: 89234, shares: 156 } },
          ],
        },
      },
    },
    errors: [429, 503],
  },
  {
    method: "get",
    path: "/v1/live",
    operationId: "live",
    tag: "counts",
    summary: "Live counts over a WebSocket",
    description:
      "Send `Upgrade: websocket`. Then send JSON text frames `{\"type\": \"subscribe\", \"items\": [{\"item_id\": \"456\", \"item_type\": \"post\"}]}` (or `unsubscribe`); a socket watches at most 100 items. Each (un)subscribe is answered `subscribed` with the socket's items; then a `counts` message arrives whenever some of them changed, one message per tick (250 ms) for all of them, at most about once a second per item. A bare `ping` frame is answered `pong`. Bad messages are answered with an `error` message in the API's error shape and the socket stays open. Privacy as on GET /v1/count, per socket: the socket's viewer is the upgrade request's bearer token (optional) and `X-Plaudit-Grant` (at most 25 owners, honoured until it expires); an item the viewer may not see is never pushed (as an untouched item, which never changes), hidden counts are pushed as null, and a change of an item's settings applies to open sockets within `PRIVACY_CACHE_TTL_MS`. See docs/live.md.",
    auth: "none",
    viewer: true,
    upgrade: true,
    response: {
      description: "Switching to a WebSocket; the server's messages are these JSON text frames.",
      schema: LiveServerMessage,
      examples: {
        subscribed: { type: "subscribed", items: ["post:456", "reel:7"] },
        counts: { type: "counts", counts: { "post:456": { likes: 1525, views: 89240, shares: 156, saves: 3 } }, as_of: AS_OF },
      },
    },
    errors: [426, 429, 503],
  },
  {
    method: "get",
    path: "/live",
    operationId: "livePage",
    tag: "meta",
    summary: "Live counts demo page",
    description: "A self-contained HTML page showing a few items' counts move (`?items=post:1,reel:2`), over one live socket.",
    auth: "none",
    response: { description: "The demo page.", schema: z.string(), contentType: "text/html", examples: { page: "<!doctype html>..." } },
  },
  ...OPERATIONS_ENDPOINTS,
  ...PRIVACY_ENDPOINTS,
  ...REMOVAL_ENDPOINTS,
  ...DATA_ENDPOINTS,
  ...HOT_ENDPOINTS,
];
