import { z } from "zod";
import { CounterTypeSchema, ItemType } from "./counters";
import { U64Id, U64IdText } from "./ids";
import { VISIBILITIES } from "./privacy";

/** Most items one batch read or has_liked call may name. */
export const MAX_BATCH_ITEMS = 100;

export const ItemRef = z.object({ item_id: U64Id, item_type: ItemType });
export type ItemRef = z.infer<typeof ItemRef>;

/** `true` or `false` in a query string. */
const QueryFlag = z.enum(["true", "false"]).optional().transform((v) => v === "true");

const UniqueViewersFlag = { description: "Also answer each item's unique viewers (a HyperLogLog estimate, 0.81 % standard error)" };

export const CountQuery = z.object({
  item_id: U64IdText,
  item_type: ItemType,
  unique_viewers: QueryFlag.meta(UniqueViewersFlag),
});

export const CountsRequest = z.object({
  items: z.array(ItemRef).min(1).max(MAX_BATCH_ITEMS),
  counter_types: z.array(CounterTypeSchema).min(1).optional(),
  unique_viewers: z.boolean().optional().meta(UniqueViewersFlag),
});

/** `a,b,c` in a query string, as a list (empty entries kept, so `a,,b` is refused by the list's schema). */
const commaList = (text: string) => text.split(",");

/** `post:456` in a query string, as an item reference. */
const ItemKeyText = z
  .string()
  .transform((text) => {
    const colon = text.indexOf(":");
    return { item_type: colon < 0 ? "" : text.slice(0, colon), item_id: colon < 0 ? text : text.slice(colon + 1) };
  })
  .pipe(z.object({ item_id: U64IdText, item_type: ItemType }));

/** `GET /v1/counts`: the query-string form of `POST /v1/counts`, so a CDN can cache it by URL. */
export const CountsQuery = z.object({
  items: z
    .string()
    .transform(commaList)
    .pipe(z.array(ItemKeyText).min(1).max(MAX_BATCH_ITEMS))
    .meta({ description: `1 to ${MAX_BATCH_ITEMS} items as item_type:item_id, comma-separated`, example: "post:1,post:2" }),
  counter_types: z
    .string()
    .transform(commaList)
    .pipe(z.array(CounterTypeSchema).min(1))
    .optional()
    .meta({ description: "Comma-separated counters to answer; all four when absent" }),
  unique_viewers: QueryFlag.meta(UniqueViewersFlag),
});

export const HasLikedRequest = z.object({
  item_ids: z.array(U64Id).min(1).max(MAX_BATCH_ITEMS),
  item_type: ItemType,
});

const Count = z.number().int().nonnegative();

/** A count the item's owner may hide: null for everyone else (docs/privacy.md). */
const ShownCount = Count.nullable().meta({ description: "null when the item's owner hides its counts from others" });

export const LikeResponse = z.object({
  status: z.enum(["liked", "already_liked", "unliked", "not_liked"]),
  count: ShownCount,
  count_formatted: z.string().nullable(),
  user_liked: z.boolean(),
});
export type LikeResponse = z.infer<typeof LikeResponse>;

export const SaveResponse = z.object({
  status: z.enum(["saved", "already_saved", "unsaved", "not_saved"]),
  count: ShownCount,
  count_formatted: z.string().nullable(),
  user_saved: z.boolean(),
});
export type SaveResponse = z.infer<typeof SaveResponse>;

/**
 * A like, unlike, save or unsave accepted while the user's object could not
 * be reached in time (202): kept as an intent and applied once the object is
 * back, unless the user acted on the item since or a limit refuses it then.
 */
export const PendingToggleResponse = z.object({ status: z.literal("pending") });
export type PendingToggleResponse = z.infer<typeof PendingToggleResponse>;

export const EventResponse = z.object({
  status: z.literal("counted"),
  count: ShownCount,
  count_formatted: z.string().nullable(),
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
  unique_viewers: Count.optional().meta({ description: "Distinct users who viewed the item (estimate); only when asked for" }),
});

/** Counts as a viewer may read them: each null when the item's owner hides them from others. */
export const ShownCountsObject = z.object({
  likes: ShownCount,
  views: ShownCount,
  shares: ShownCount,
  saves: ShownCount,
  unique_viewers: ShownCount.optional().meta({
    description: "Distinct users who viewed the item (estimate); only when asked for; null when the owner hides the item's counts from others",
  }),
});

export const CountResponse = z.object({
  item_id: z.string(),
  item_type: ItemType,
  counts: ShownCountsObject,
  cached: z.boolean(),
  as_of: z.iso.datetime(),
});

export const CountsResponse = z.object({
  counts: z.record(z.string(), ShownCountsObject.partial().nullable()),
  took_ms: z.number().nonnegative(),
  partial: z.literal(true).optional(),
});

export const HasLikedResponse = z.object({
  liked: z.record(z.string(), z.boolean()),
  pending: z
    .array(z.string())
    .optional()
    .meta({
      description:
        "Items whose answer comes from a like or unlike the caller made that was accepted as pending (202) and is not yet applied; present only when there is one. It is applied within seconds of the user's object answering again, unless a newer action of the user on the item supersedes it",
    }),
});

export const ErrorResponse = z.object({
  error: z.string(),
  message: z.string(),
  details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  retry_after: z.number().int().positive().optional(),
});
export type ErrorResponse = z.infer<typeof ErrorResponse>;

export const HealthResponse = z.object({ status: z.literal("ok") });

export const AdminUserParams = z.object({ user_id: U64IdText });

const PerUserLimits = z.object({ per_minute: Count, per_day: Count });
const CounterLimits = z.object({ likes: PerUserLimits, saves: PerUserLimits });

/** Every per-user limit that can be in force for a user, and what selects one (docs/auth.md). */
export const LimitsView = z.object({
  standard: CounterLimits.meta({ description: "The limits of a user in no stricter tier" }),
  tiers: z
    .record(z.string(), CounterLimits.extend({ share: z.number().meta({ description: "Share of the standard limits" }) }))
    .meta({ description: "Each standing tier's stricter limits (STANDING_TIERS)" }),
  selected_by: z.object({
    standing_claim: z.string().nullable(),
    bot_score_below: z.number(),
    bot_score_tier: z.string(),
    rule: z.string(),
  }),
  platform: z
    .object({ per_ip: z.string(), per_device: z.string().nullable() })
    .meta({ description: "Limits counted by Cloudflare's Rate Limiting binding, not per user" }),
});

export type LimitsView = z.infer<typeof LimitsView>;

export const AdminUserResponse = z.object({
  user_id: U64IdText,
  pending_deliveries: Count.meta({ description: "Edges whose newest change the item side has not acknowledged yet (an edge changed again before its delivery counts once)" }),
  limits: LimitsView,
});

/** The OpenAPI document itself, as `GET /openapi.json` serves it (only its outline is promised). */
export const OpenApiDocumentResponse = z.looseObject({
  openapi: z.string(),
  info: z.looseObject({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.unknown()),
});

export const AdminItemParams = z.object({ item_type: ItemType, item_id: U64IdText });

const Visibility = z.enum(VISIBILITIES, { error: `must be one of ${VISIBILITIES.join(", ")}` });

/**
 * What the host app says about an item. PUT replaces all of it; a field left
 * out takes its default. Only an item with an owner can be other than public
 * or hide its counts: "the owner only" needs an owner.
 */
export const ItemSettingsBody = z
  .object({
    owner_id: U64Id.nullable().default(null).meta({ description: "The item's owner; null: nobody" }),
    visibility: Visibility.default("public").meta({
      description: "public: everyone; followers: the owner and viewers whose grant names the owner; private: the owner only",
    }),
    hide_counts: z.boolean().default(false).meta({ description: "Counts read as null for everyone but the owner" }),
  })
  .refine((body) => body.owner_id !== null || (body.visibility === "public" && !body.hide_counts), {
    error: "an item that is not public, or hides its counts, needs an owner_id",
    path: ["owner_id"],
  });

export const ItemSettingsResponse = z.object({
  item_id: U64IdText,
  item_type: ItemType,
  owner_id: U64IdText.nullable(),
  visibility: Visibility,
  hide_counts: z.boolean(),
  updated_at: z.iso.datetime().nullable().meta({ description: "When the host app last set them; null: never (the defaults)" }),
});

export const BlockParams = z.object({ user_id: U64IdText, blocked_id: U64IdText }).refine((p) => p.user_id !== p.blocked_id, {
  error: "a user cannot block themselves",
  path: ["blocked_id"],
});

export const BlockResponse = z.object({
  blocker_id: U64IdText,
  blocked_id: U64IdText,
  blocking: z.boolean(),
  since: z.iso.datetime().nullable().meta({ description: "When the block was recorded; null when there is none" }),
});

export const AdminItemResponse = z.object({
  item_id: z.string(),
  item_type: ItemType,
  counts: CountsObject,
  seq: z.number().int().nonnegative().meta({
    description: "The count snapshot's version; D1 and the central store hold it once the pipeline has caught up",
  }),
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
  headroom: z.object({
    queue_sends_per_second: z.number().nullable().meta({ description: "Messages sent to the busiest queue, per second (its limit: 5,000)" }),
    d1_queries_per_second: z.number().nullable().meta({ description: "Statements run on the busiest D1 database, per second (its limit: about 1,000)" }),
    d1_largest_database_bytes: z.number().nullable().meta({ description: "Size of the largest D1 database (its limit: 10 GB)" }),
    objects_overloaded: z.number().min(0).meta({ description: 'Object calls refused as "overloaded" in the window' }),
  }),
  breakers: z
    .array(z.object({ dependency: z.string(), open: z.boolean() }))
    .meta({ description: "Each store's circuit breaker as last reported (only breakers that have changed state appear)" }),
  passes: z
    .array(
      z.object({
        pass: z.string().meta({ description: "reconcile, rebuild_d1 or rebuild_central" }),
        ranges: z.number().int().min(0),
        ranges_done: z.number().int().min(0),
        items: z.number().min(0).meta({ description: "Items (or users) visited, summed over the ranges, since the counters began" }),
        items_per_second: z.number().min(0).meta({ description: "Items visited per second in the window" }),
      }),
    )
    .meta({ description: "Each pass over every item (docs/pipeline.md) as last reported: its ranges done and its progress" }),
  alerts: z.array(DashboardAlert),
});

/** Most days `GET /v1/history` answers at once. */
export const MAX_HISTORY_DAYS = 366;

export const HistoryQuery = z.object({
  item_id: U64IdText,
  item_type: ItemType,
  days: z
    .string()
    .regex(/^[1-9][0-9]{0,2}$/, `must be a whole number from 1 to ${MAX_HISTORY_DAYS}`)
    .transform(Number)
    .refine((n) => n <= MAX_HISTORY_DAYS, `must be a whole number from 1 to ${MAX_HISTORY_DAYS}`)
    .optional()
    .transform((n) => n ?? 30)
    .meta({ description: `Days to answer, ending today (UTC); default 30, at most ${MAX_HISTORY_DAYS}` }),
});

const HistoryCount = z.number().int().nullable().meta({ description: "null when the item's owner hides its counts from others" });
const HistoryCounts = z.object({ likes: HistoryCount, saves: HistoryCount, views: HistoryCount, shares: HistoryCount });

export const HistoryDay = HistoryCounts.extend({
  date: z.iso.date().meta({ description: "The UTC day" }),
  totals: HistoryCounts.meta({ description: "The item's counts at the end of the day (now, for today)" }),
}).meta({ description: "The day's change of each count (net: likes minus unlikes), and the totals at its end" });

export const HistoryResponse = z.object({
  item_id: z.string(),
  item_type: ItemType,
  days: z.array(HistoryDay).meta({ description: "One entry per day, oldest first, today last" }),
});
export type HistoryResponse = z.infer<typeof HistoryResponse>;

// Named here so the OpenAPI document gives them components (workers/openapi/json-schema.ts).
export { OwnLike, OwnLikesQuery, OwnLikesResponse } from "./own-likes";
export { ImportEdge, ImportRequest, ImportResponse } from "./import";
export { RebuildRequest, RebuildResponse } from "./rebuild";
export { ReshardRequest, ReshardResponse } from "./reshard";
export { Liker, LikersQuery, LikersResponse } from "./likers";
