import { z } from "zod";
import { CounterTypeSchema, ItemType } from "./counters";
import { U64Id, U64IdText } from "./ids";

/** Most items one batch read or has_liked call may name. */
export const MAX_BATCH_ITEMS = 100;

export const ItemRef = z.object({ item_id: U64Id, item_type: ItemType });
export type ItemRef = z.infer<typeof ItemRef>;

export const CountQuery = z.object({ item_id: U64IdText, item_type: ItemType });

export const CountsRequest = z.object({
  items: z.array(ItemRef).min(1).max(MAX_BATCH_ITEMS),
  counter_types: z.array(CounterTypeSchema).min(1).optional(),
});

export const HasLikedRequest = z.object({
  item_ids: z.array(U64Id).min(1).max(MAX_BATCH_ITEMS),
  item_type: ItemType,
});

const Count = z.number().int().nonnegative();

export const LikeResponse = z.object({
  status: z.enum(["liked", "already_liked", "unliked", "not_liked"]),
  count: Count,
  count_formatted: z.string(),
  user_liked: z.boolean(),
});
export type LikeResponse = z.infer<typeof LikeResponse>;

export const SaveResponse = z.object({
  status: z.enum(["saved", "already_saved", "unsaved", "not_saved"]),
  count: Count,
  count_formatted: z.string(),
  user_saved: z.boolean(),
});
export type SaveResponse = z.infer<typeof SaveResponse>;

export const EventResponse = z.object({
  status: z.literal("counted"),
  count: Count,
  count_formatted: z.string(),
});
export type EventResponse = z.infer<typeof EventResponse>;

/**
 * The optional Idempotency-Key header of a view or share: a retry with the
 * same key within 24 hours counts once.
 */
export const IdempotencyKey = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/, "must be 1 to 255 visible ASCII characters")
  .optional();

export const CountsObject = z.object({
  likes: Count,
  views: Count,
  shares: Count,
  saves: Count,
});

export const CountResponse = z.object({
  item_id: z.string(),
  item_type: ItemType,
  counts: CountsObject,
  cached: z.boolean(),
  as_of: z.iso.datetime(),
});

export const CountsResponse = z.object({
  counts: z.record(z.string(), CountsObject.partial().nullable()),
  took_ms: z.number().nonnegative(),
  partial: z.literal(true).optional(),
});

export const HasLikedResponse = z.object({ liked: z.record(z.string(), z.boolean()) });

export const ErrorResponse = z.object({
  error: z.string(),
  message: z.string(),
  details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  retry_after: z.number().int().positive().optional(),
});
export type ErrorResponse = z.infer<typeof ErrorResponse>;

export const HealthResponse = z.object({ status: z.literal("ok") });

export const AdminUserParams = z.object({ user_id: U64IdText });

export const AdminUserResponse = z.object({
  user_id: U64IdText,
  pending_deliveries: Count.meta({ description: "Changes the item side has not acknowledged yet" }),
});

/** The OpenAPI document itself, as `GET /openapi.json` serves it (only its outline is promised). */
export const OpenApiDocumentResponse = z.looseObject({
  openapi: z.string(),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.unknown()),
});

export const AdminItemParams = z.object({ item_type: ItemType, item_id: U64IdText });

export const AdminItemResponse = z.object({
  item_id: z.string(),
  item_type: ItemType,
  counts: CountsObject,
  hot: z.boolean().meta({ description: "New likes and saves go to the item's children" }),
  shards: z.number().int().nonnegative().meta({ description: "The item's N; 0 before its first hot period" }),
  children: z.array(
    z.object({
      index: z.number().int().nonnegative(),
      likes: Count,
      saves: Count,
      seq: z.number().int().nonnegative(),
      writes: z.number().int().nonnegative().meta({ description: "Changes the child has received in all" }),
      reported_at: z.iso.datetime(),
    }),
  ),
  writes_per_sec: z.number().nonnegative(),
  calls: z
    .object({
      applies: z.number().int().nonnegative(),
      refused: z.number().int().nonnegative(),
      reports: z.number().int().nonnegative(),
      reads: z.number().int().nonnegative(),
      commits: z.number().int().nonnegative().meta({ description: "Storage commits the head made" }),
    })
    .meta({ description: "Calls the head served since it last started, and its commits" }),
});

const Rate = z.number().min(0);
const Ratio = z.number().min(0).max(1).nullable();
const Quantiles = z.object({ p50: z.number(), p99: z.number() }).nullable();

/** One alert rule's state: the value it compares with its threshold (null without data) and whether it fires. */
export const DashboardAlert = z.object({
  name: z.string(),
  summary: z.string(),
  threshold: z.number(),
  value: z.number().nullable(),
  firing: z.boolean(),
});

export const DashboardHotItem = z.object({
  item: z.string().meta({ description: "Item key, `<item_type>:<item_id>`" }),
  shards: z.number(),
  writes_per_second: z.number().nullable(),
});

/** `GET /v1/admin/dashboard.json`: rates over the last 10 to 15 s, latest gauges, hot items and alerts. */
export const DashboardData = z.object({
  as_of: z.string(),
  window_seconds: z.number().meta({ description: "Length of the window the rates are over" }),
  likes_per_second: Rate,
  unlikes_per_second: Rate,
  reads_per_second: Rate,
  error_rate: Ratio.meta({ description: "Share of requests answered 5xx; null without requests" }),
  write_latency_ms: Quantiles,
  read_latency_ms: Quantiles,
  cache_hit_rate: Ratio,
  dedup_rate: Ratio.meta({ description: "Share of likes that repeated an existing like" }),
  rate_limited_per_second: Rate,
  queue_lag_seconds: z.number().nullable(),
  drift_ratio: z.number().nullable(),
  hot_item_count: z.number().int().min(0),
  hot_items: z.array(DashboardHotItem).max(10),
  alerts: z.array(DashboardAlert),
});
