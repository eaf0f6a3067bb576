/**
 * The endpoints that read a user's own data and bring data in, as entries of
 * the OpenAPI registry.
 */
import { OwnLikesQuery, OwnLikesResponse } from "../../shared/schemas";
import type { Endpoint } from "./endpoint";

export const DATA_ENDPOINTS: readonly Endpoint[] = [
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
];
