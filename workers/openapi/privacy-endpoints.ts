/**
 * The endpoints through which the host app tells plaudit about items and
 * users (docs/privacy.md), as entries of the OpenAPI registry.
 */
import { AdminItemParams, BlockParams, BlockResponse, ItemSettingsBody, ItemSettingsResponse, LikersQuery, LikersResponse } from "../../shared/schemas";
import type { Endpoint } from "./endpoint";

const AS_OF = "2026-11-30T09:00:00.000Z";
const ITEM = { item_id: "456", item_type: "post" } as const;
const ITEM_PARAMS = { schema: AdminItemParams, example: { item_type: "post", item_id: "456" } };
const BLOCK_PARAMS = { schema: BlockParams, example: { user_id: "42", blocked_id: "43" } };

const SETTINGS_RESPONSE = {
  description: "The item's settings.",
  schema: ItemSettingsResponse,
  examples: {
    hidden: { ...ITEM, owner_id: "42", visibility: "public", hide_counts: true, updated_at: AS_OF },
    unknown: { ...ITEM, owner_id: null, visibility: "public", hide_counts: false, updated_at: null },
  },
};

const blockResponse = (description: string, blocking: boolean) => ({
  description,
  schema: BlockResponse,
  examples: { [blocking ? "blocking" : "none"]: { blocker_id: "42", blocked_id: "43", blocking, since: blocking ? AS_OF : null } },
});

export const PRIVACY_ENDPOINTS: readonly Endpoint[] = [
  {
    method: "get",
    path: "/v1/likers",
    operationId: "likers",
    tag: "likes",
    summary: "Who liked an item, newest first",
    description:
      "From the central store's time-ordered item-to-likers table, so a like shows here once the pipeline has carried it (seconds). Paged by an opaque cursor over (liked_at, user): a like made while a client pages is newer than every cursor, so no page skips or repeats a liker because of it. Likers the item's owner blocks, and likers who block the caller or whom the caller blocks, are left out, and the page is filled up to `limit` from further store pages (at most five of them, so a page may hold fewer while `next_cursor` goes on). An item the caller may not see, or whose counts are hidden from them, has no likers, as an item nobody liked (docs/privacy.md); the store is read for it all the same, so it fails as an untouched item does. 503 when the central store cannot be reached or is not configured, whatever the item.",
    auth: "user",
    viewer: true,
    query: { schema: LikersQuery, example: { item_id: "456", item_type: "post", limit: "2" } },
    response: {
      description: "One page of likers.",
      schema: LikersResponse,
      examples: {
        page: {
          likers: [
            { user_id: "43", liked_at: "2026-11-30T09:00:00.000Z" },
            { user_id: "42", liked_at: "2026-11-29T17:42:10.512Z" },
          ],
          next_cursor: "MTc2NDQzNzczMDUxMi40Mg",
        },
      },
    },
    errors: [503],
  },
  {
    method: "put",
    path: "/v1/admin/items/{item_type}/{item_id}/settings",
    operationId: "setItemSettings",
    tag: "privacy",
    summary: "Set an item's owner, visibility and hidden counts",
    description:
      "Replaces the item's settings (a field left out takes its default). `private`: only the owner sees the item; `followers`: the owner and viewers whose `X-Plaudit-Grant` names the owner; hidden counts read as null for everyone but the owner. An item the viewer may not see reads as one nobody touched, and liking it is 404. Other isolates apply a change within `PRIVACY_CACHE_TTL_MS`.",
    auth: "service",
    params: ITEM_PARAMS,
    body: {
      schema: ItemSettingsBody,
      examples: {
        hidden: { owner_id: "42", visibility: "public", hide_counts: true },
        followers: { owner_id: "42", visibility: "followers" },
      },
    },
    response: SETTINGS_RESPONSE,
    errors: [503],
  },
  {
    method: "get",
    path: "/v1/admin/items/{item_type}/{item_id}/settings",
    operationId: "itemSettings",
    tag: "privacy",
    summary: "An item's settings",
    description: "As stored; an item never described is public with no owner (`updated_at` null).",
    auth: "service",
    params: ITEM_PARAMS,
    response: SETTINGS_RESPONSE,
    errors: [503],
  },
  {
    method: "put",
    path: "/v1/admin/users/{user_id}/blocks/{blocked_id}",
    operationId: "block",
    tag: "privacy",
    summary: "Record that a user blocks another",
    description:
      "`blocked_id` can no longer like or save `user_id`'s items (404, as for an item they may not see); likes made before the block stay counted. Idempotent: a repeat keeps the first `since`.",
    auth: "service",
    params: BLOCK_PARAMS,
    response: blockResponse("The block is recorded.", true),
    errors: [503],
  },
  {
    method: "delete",
    path: "/v1/admin/users/{user_id}/blocks/{blocked_id}",
    operationId: "unblock",
    tag: "privacy",
    summary: "Lift a block",
    description: "Lifting a block that does not exist answers the same.",
    auth: "service",
    params: BLOCK_PARAMS,
    response: blockResponse("There is no block now.", false),
    errors: [503],
  },
  {
    method: "get",
    path: "/v1/admin/users/{user_id}/blocks/{blocked_id}",
    operationId: "blocking",
    tag: "privacy",
    summary: "Whether a user blocks another",
    auth: "service",
    params: BLOCK_PARAMS,
    response: blockResponse("The block, or none.", true),
    errors: [503],
  },
];
