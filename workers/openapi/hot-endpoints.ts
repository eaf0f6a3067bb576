/** The endpoint through which the host app says an item is about to be hot (docs/hot-items.md). */
import { AdminItemParams, AdminItemResponse } from "../../shared/schemas";
import type { Endpoint } from "./endpoint";

export const HOT_ENDPOINTS: readonly Endpoint[] = [
  {
    method: "post",
    path: "/v1/admin/items/{item_type}/{item_id}/hot",
    operationId: "expectHot",
    tag: "admin",
    summary: "Split an item before it turns hot",
    description:
      "The host app expects a burst of likes (an account with millions of followers has just posted): the item is split over its children now, before its first like, so its head never queues the burst. An item hinted in vain cools and merges back like any other, after `COOL_WINDOW_SECONDS` under `COOL_WRITES_PER_SEC`. Hinting a hot item changes nothing.",
    auth: "service",
    params: { schema: AdminItemParams, example: { item_type: "post", item_id: "456" } },
    response: {
      description: "The item's state after the split.",
      schema: AdminItemResponse,
      examples: {
        split_before_its_first_like: {
          item_id: "456",
          item_type: "post",
          counts: { likes: 0, views: 0, shares: 0, saves: 0 },
          seq: 1,
          hot: true,
          shards: 16,
          children: [],
          writes_per_sec: 0,
          calls: { applies: 0, refused: 0, reports: 0, reads: 0, commits: 1 },
        },
      },
    },
    errors: [503],
  },
];
