/**
 * The API's request and answer shapes. They mirror the zod schemas in the
 * service's shared/schemas.ts; the service's typecheck fails when they drift
 * (test/workers/client.test.ts compares them).
 */
export type ItemType = "post" | "reel" | "comment";
export type CounterType = "likes" | "saves" | "views" | "shares";
export type Counts = {
  likes: number;
  views: number;
  shares: number;
  saves: number;
  /** Distinct users who viewed the item (an estimate, 0.81 % standard error); only when asked for. */
  unique_viewers?: number;
};
/** Counts as a reader sees them: each null when the item's owner hides them from everyone else. */
export type ShownCounts = {
  likes: number | null;
  views: number | null;
  shares: number | null;
  saves: number | null;
  /** Distinct users who viewed the item (an estimate); only when asked for. */
  unique_viewers?: number | null;
};

/** An id is an unsigned 64-bit integer as a canonical decimal string; a safe integer is accepted too. */
export type Id = string | number;
export type ItemRef = { item_id: Id; item_type: ItemType };

export type LikeResult = {
  status: "liked" | "already_liked" | "unliked" | "not_liked";
  /** null when the item's owner hides its counts. */
  count: number | null;
  count_formatted: string | null;
  user_liked: boolean;
};

export type SaveResult = {
  status: "saved" | "already_saved" | "unsaved" | "not_saved";
  count: number | null;
  count_formatted: string | null;
  user_saved: boolean;
};

/**
 * 202: the user's object could not be reached in time; the change is kept and
 * applied later (unless the user acts on the item meanwhile: the newer action
 * wins). `hasLiked` shows the outcome.
 */
export type PendingResult = { status: "pending" };

export type EventResult = {
  status: "counted";
  count: number | null;
  count_formatted: string | null;
};

export type CountResult = {
  item_id: string;
  item_type: ItemType;
  counts: ShownCounts;
  cached: boolean;
  as_of: string;
};

export type CountsResult = {
  /** Keyed `item_type:item_id`; `null` for an item that could not be read. */
  counts: Record<string, Partial<ShownCounts> | null>;
  took_ms: number;
  partial?: true;
};

/** Each null when the item's owner hides its counts from everyone else. */
type DayCounts = { likes: number | null; saves: number | null; views: number | null; shares: number | null };

export type HistoryResult = {
  item_id: string;
  item_type: ItemType;
  /** One entry per UTC day, oldest first, today last: the day's net change of each count, and the totals at its end. */
  days: { date: string; likes: number | null; saves: number | null; views: number | null; shares: number | null; totals: DayCounts }[];
};

/** What a live socket sends (`PlauditClient.liveUrl()`): the socket's items after each (un)subscribe, changed counts, or an error. */
export type LiveMessage =
  | { type: "subscribed"; items: string[] }
  | { type: "counts"; counts: Record<string, { likes: number | null; views: number | null; shares: number | null; saves: number | null }>; as_of: string }
  | { type: "error"; error: string; message: string; details?: ErrorDetail[] };

/** `pending`: the items whose answer comes from a like or unlike accepted as pending (202) and not yet applied. */
export type HasLikedResult = { liked: Record<string, boolean>; pending?: string[] };

/** One page of the caller's likes, newest first; `next_cursor` is null on the last page. */
export type LikersResult = {
  likers: { user_id: string; liked_at: string }[];
  next_cursor: string | null;
};

export type MyLikesResult = {
  /** `pending`: a like accepted as pending (202), listed first on the first page until it is applied. */
  likes: { item_id: string; item_type: ItemType; liked_at: string | null; pending?: true }[];
  next_cursor: string | null;
};

/** One like edge from another system; `liked_at` is ISO-8601 with a zone or ms since the epoch. */
export type ImportEdgeInput = { user_id: Id; item_id: Id; item_type: ItemType; liked_at: string | number; kind: "like" | "unlike" };

/** One outcome per edge, in order: applied, already so, or older than the user's newest action on the item. */
export type ImportResult = { results: ("applied" | "duplicate" | "superseded" | "barred")[] };

/** The store a rebuild recomputes from the objects. */
export type RebuildTarget = "d1" | "central" | "index";

/** One step of a rebuild: what it changed, and the cursor of the next step (null when complete). */
export type RebuildStepResult = {
  target: RebuildTarget;
  checked: number;
  written: number;
  unchanged: number;
  repaired: number;
  edges_written: number;
  edges_unchanged: number;
  failed: { key: string; error: string }[];
  next: string | null;
  progress: number;
};

/** One step of moving the counts to another count layout: where the reshard stands, and when to call again. */
export type ReshardStepResult = {
  from: number;
  to: number;
  phase: "dual" | "copy" | "switch" | "cleanup" | "done";
  visited: number;
  total: number;
  moved: number;
  repaired: number;
  wait_ms: number;
};

export type Visibility = "public" | "followers" | "private";

/** What the host app says about an item (service token); a field left out takes its default. */
export type ItemSettingsInput = { owner_id?: Id | null; visibility?: Visibility; hide_counts?: boolean };

export type ItemSettingsResult = {
  item_id: string;
  item_type: ItemType;
  owner_id: string | null;
  visibility: Visibility;
  hide_counts: boolean;
  /** null: never set (an unknown item: public, no owner). */
  updated_at: string | null;
};

export type BlockResult = { blocker_id: string; blocked_id: string; blocking: boolean; since: string | null };

/** A user's deletion or purge as it stands (`kind` null: none was asked). */
export type RemovalResult = {
  user_id: string;
  kind: "delete" | "purge" | null;
  phase: "unliking" | "forgetting" | "wiping" | "done" | null;
  requested_at: string | null;
  finished_at: string | null;
  /** Liking and saving are refused with 403 `barred`. */
  barred: boolean;
  removed: { likes: number; saves: number };
  items_forgotten: number;
  remaining: { on: number; undelivered: number; edges: number };
};

export type PurgeResult = { purged: RemovalResult[] };

export type ErrorDetail = { path: string; message: string };

/** The API's one error shape. */
export type ErrorBody = {
  error: string;
  message: string;
  details?: ErrorDetail[];
  retry_after?: number;
};

type PerUserLimits = { per_minute: number; per_day: number };
type CounterLimits = { likes: PerUserLimits; saves: PerUserLimits };

/** What an operator needs to explain a user's 429s: every limit that can be in force and the rule that picks one. */
export type LimitsView = {
  standard: CounterLimits;
  tiers: Record<string, CounterLimits & { share: number }>;
  selected_by: { standing_claim: string | null; bot_score_below: number; bot_score_tier: string; rule: string };
  platform: { per_ip: string; per_device: string | null };
};

/** A user as operators see it (service token): undelivered changes and limits. */
export type AdminUserResult = { user_id: string; pending_deliveries: number; limits: LimitsView };

/** An item as operators see it (service token): exact counts, whether it is hot, its children's last reports. */
export type AdminItemResult = {
  item_id: string;
  item_type: ItemType;
  counts: Counts;
  seq: number;
  hot: boolean;
  shards: number;
  children: { index: number; likes: number; saves: number; seq: number; writes: number; reported_at: string }[];
  writes_per_sec: number;
  calls: { applies: number; refused: number; reports: number; reads: number; commits: number };
};

export type HealthResult = { status: "ok" };

/** The API's OpenAPI 3.1 document (only its outline is promised). */
export type OpenApiDocument = { openapi: string; info: { title: string; version: string }; paths: Record<string, unknown>; [field: string]: unknown };

/** The dashboard's figures over its last window (service token); docs/operations.md names each. */
export type DashboardDataResult = { as_of: string; window_seconds: number; [figure: string]: unknown };
