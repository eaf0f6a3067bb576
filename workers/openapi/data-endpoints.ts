/**
 * The endpoints that read a user's own data and bring data in, as entries of
 * the OpenAPI registry.
 */
import { CountsQuery, CountsResponse, ImportRequest, ImportResponse, OwnLikesQuery, OwnLikesResponse, RebuildRequest, RebuildResponse, ReshardRequest, ReshardResponse } from "../../shared/schemas";
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
      "Exact, from the caller's own object. Paged by an opaque cursor over (liked_at, item): a like made while a client pages is newer than every cursor, so no page skips or repeats an item because of it. `item_type` keeps one type only. Likes accepted as pending (202) and not yet applied lead the first page, marked `pending: true`; an item whose unlike is pending is left out (read-your-writes). A like of an item the caller may no longer see is left out, pending or not, as `has_liked` answers false for it, and shows again once they may see it (docs/privacy.md, \"A like out of sight\"); the page is filled from further rows (at most five reads, so a page may hold fewer while `next_cursor` goes on).",
    auth: "user",
    viewer: true,
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
      "Up to 100 like edges from another system (service token), each through its user's object like a live like, so the item side, D1 and the central store follow. Each edge carries its target state (`kind`: like or unlike, never a toggle) and its time (`liked_at`): it applies only if the user has no action on the item as new (invariant I6), so a repeated batch changes nothing and an old import never undoes a newer live like. Outside the users' rate limits: `npm run import` paces itself on the answers. Backpressure: a 503 `import_backpressure` with a Retry-After, before any edge is applied, while the event queues hold more than IMPORT_MAX_QUEUE_BACKLOG messages; also when a user object fails, after the other users' edges were committed (sending the batch again is safe: they answer duplicate) (docs/import.md).",
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
  {
    method: "post",
    path: "/v1/admin/rebuild",
    operationId: "rebuildStep",
    tag: "admin",
    summary: "One step of rebuilding a store from the objects",
    description:
      "Recomputes a store from the objects, which hold the truth (service token), one step at a time: `d1` copies each indexed item's counts into its count database; `central` its counts into the central store, then each indexed user's edges (both directions); `index` backfills the index of every item from the count rows and the index of users from the central store's edges. A step visits `limit` keys after `cursor` and answers what it changed and the `next` cursor (null when complete). It writes only what the store lacks or holds older; where the store holds another count at the same version, the item's object emits a fresh snapshot. Safe to repeat and to run beside live traffic. `npm run rebuild` calls it until done, paced, with a checkpoint (docs/rebuild.md).",
    auth: "service",
    body: {
      schema: RebuildRequest,
      examples: { start: { target: "d1", limit: 50 } },
    },
    response: {
      description: "What the step changed, and where the next one starts.",
      schema: RebuildResponse,
      examples: {
        step: {
          target: "d1",
          checked: 50,
          written: 3,
          unchanged: 46,
          repaired: 1,
          edges_written: 0,
          edges_unchanged: 0,
          failed: [],
          next: "eyJwaGFzZSI6Iml0ZW1zIiwiZHJhdyI6MTIzNDU2LCJrZXkiOiJwb3N0OjQ1NiJ9",
          progress: 0.31,
        },
      },
    },
    errors: [503],
  },
  {
    method: "post",
    path: "/v1/admin/reshard",
    operationId: "reshardStep",
    tag: "admin",
    summary: "One step of moving the counts to another count layout",
    description:
      "Moves every item's counts and settings rows from the current count layout to one of `databases` count databases (service token), one step at a time, while reads and writes go on: `dual` (writes go to both layouts; the old layout's settings are copied onto the central store's rows), `copy` (the old layout's rows are copied into the new one; reads ask both: for counts the row with the higher sequence wins, for settings the database that answers last), `switch` (reads still ask both; the copy is verified and what is missing or older copied again), `cleanup` (reads and writes go to the new layout only; the moved rows are deleted from the old one), then `done`. Where it stands is stored in the primary database, so any runner goes on from it; each step visits up to `limit` rows, writes only over older rows and deletes only verified ones, so it is safe to repeat. A phase's work begins RESHARD_GRACE_MS after it was entered (`wait_ms`: call again after it), longer than any isolate keeps the layout. Asking for the current layout answers `done` and changes nothing; asking for another while one runs is refused, and so is every step while the configuration disagrees with the stored layout (COUNT_DATABASES changed since the first reshard began, or a count database the layout uses has no binding), with what to fix. `npm run reshard` calls it until done, with a progress bar (docs/reads.md, \"Resharding\").",
    auth: "service",
    body: {
      schema: ReshardRequest,
      examples: { current: { databases: 1, limit: 100 } },
    },
    response: {
      description: "Where the reshard stands after the step.",
      schema: ReshardResponse,
      examples: {
        copying: { from: 1, to: 4, phase: "copy", visited: 300, total: 1200, moved: 74, repaired: 0, wait_ms: 0 },
      },
    },
    errors: [503],
  },
];
