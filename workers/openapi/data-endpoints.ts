/**
 * The endpoints that read a user's own data and bring data in, as entries of
 * the OpenAPI registry.
 */
import { CountsQuery, CountsResponse, ImportRequest, ImportResponse, OwnLikesQuery, OwnLikesResponse } from "../../shared/schemas";
import type { Endpoint } from "./endpoint";

export const DATA_ENDPOINTS: readonly Endpoint[] = [
  {
    method: "get",
    path: "/v1/counts",
    operationId: "countsByQuery",
    tag: "counts",
    summary: "Counts of up to 100 items, cacheable",
    description:
      "The same answer as POST /v1/counts, for a URL a CDN or a browser can cache. Without a token (and without X-Plaudit-Grant) the answer is the same for everyone: `Cache-Control: public, max-age=2, s-maxage=2` (COUNTS_PUBLIC_MAX_AGE_SECONDS). With one it may depend on who asks: `private, no-cache`, so a shared cache never keeps it and the user reads their own writes. Every complete answer has a weak `ETag`; a request whose `If-None-Match` names it is answered 304 with no body. A partial or stale answer is `no-store`. `Vary: Authorization, X-Plaudit-Grant`.",
    auth: "none",
    query: { schema: CountsQuery, example: { items: "post:1,reel:2", counter_types: "likes,views" } },
    response: {
      description: "Counts by item key (or 304 Not Modified when If-None-Match matches).",
      schema: CountsResponse,
      examples: {
        feed: { counts: { "post:1": { likes: 1524, views: 89234 }, "reel:2": { likes: 7, views: 120 } }, took_ms: 12 },
      },
    },
    viewer: true,
    errors: [429, 503],
  },
  {
    method: "get",
    path: "/v1/me/likes",
    operationId: "myLikes",
    tag: "likes",
    summary: "The caller's own likes, newest first",
    description:
      "Exact, from the caller's own object. Paged by an opaque cursor over (liked_at, item): a like made while a client pages is newer than every cursor, so no page skips or repeats an item because of it. `item_type` keeps one type only.",
    auth: "user",
    query: { schema: OwnLikesQuery, example: { item_type: "post", limit: "2" } },
    response: {
      description: "One page of likes.",
      schema: OwnLikesResponse,
      examples: {
        page: {
          likes: [
            { item_id: "456", item_type: "post", liked_at: "2026-11-30T09:00:00.000Z" },
            { item_id: "123", item_type: "post", liked_at: "2026-11-29T17:42:10.512Z" },
          ],
          next_cursor: "MTc2NDQzNzczMDUxMi5wb3N0OjEyMw",
        },
      },
    },
    errors: [503],
  },
  {
    method: "post",
    path: "/v1/admin/import",
    operationId: "importEdges",
    tag: "admin",
    summary: "Import a batch of like edges",
    description:
      "Up to 100 like edges from another system (service token), each through its user's object like a live like, so the item side, D1 and the central store follow. Each edge carries its target state (`kind`: like or unlike, never a toggle) and its time (`liked_at`): it applies only if the user has no action on the item as new (invariant I6), so a repeated batch changes nothing and an old import never undoes a newer live like. Outside the users' rate limits: `npm run import` paces itself (docs/import.md).",
    auth: "service",
    body: {
      schema: ImportRequest,
      examples: {
        two: {
          edges: [
            { user_id: "42", item_id: "456", item_type: "post", liked_at: "2024-05-01T12:00:00Z", kind: "like" },
            { user_id: "43", item_id: "456", item_type: "post", liked_at: 1714564800000, kind: "unlike" },
          ],
        },
      },
    },
    response: {
      description: "One outcome per edge, in order.",
      schema: ImportResponse,
      examples: { two: { results: ["applied", "duplicate"] } },
    },
    errors: [503],
  },
];
