import { PlauditError } from "./errors.js";
import { backoffMs, RETRYABLE_STATUSES, retryAfterSeconds, sleep } from "./retry.js";
import type {
  AdminItemResult,
  AdminUserResult,
  BlockResult,
  DashboardDataResult,
  HealthResult,
  OpenApiDocument,
  CounterType,
  CountResult,
  CountsResult,
  ErrorBody,
  EventResult,
  HasLikedResult,
  HistoryResult,
  Id,
  ImportEdgeInput,
  ImportResult,
  RebuildStepResult,
  RebuildTarget,
  ReshardStepResult,
  ItemRef,
  ItemSettingsInput,
  ItemSettingsResult,
  ItemType,
  LikeResult,
  LikersResult,
  MyLikesResult,
  PendingResult,
  PurgeResult,
  RemovalResult,
  SaveResult,
} from "./types.js";

export type ClientOptions = {
  /** Where the API is, e.g. `https://plaudit.example.com`. */
  baseUrl: string;
  /** A bearer token, or a function that returns a fresh one for each call. */
  token?: string | (() => string | Promise<string>);
  /** Defaults to the global fetch. */
  fetch?: (request: Request) => Promise<Response>;
  /** Time budget of one call, retries and their waits included (default 10 s). */
  timeoutMs?: number;
  /** Most retries of a 429 or 503 per call (default 2). */
  maxRetries?: number;
  /** A Retry-After longer than this is not waited for: the call fails with the error at once (default 5 s). */
  maxRetryDelayMs?: number;
  /** How to wait between attempts (tests pass one that does not really wait). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Makes Idempotency-Key values (default `crypto.randomUUID`). */
  idempotencyKey?: () => string;
};

export type CallOptions = {
  signal?: AbortSignal;
  /**
   * A grant signed by the host app (sent as X-Plaudit-Grant): the owners
   * whose followers-only items this user may see. Reads and likes use it.
   */
  grant?: string;
  /** Overrides the client's `timeoutMs` for this call. */
  timeoutMs?: number;
};

export type CountOptions = CallOptions & { uniqueViewers?: boolean };

export type RequestOptions = CallOptions & {
  query?: Record<string, string | number | undefined>;
  /** Sent as JSON. */
  body?: unknown;
  /**
   * Send an Idempotency-Key: one value per call, the same on each of its
   * retries, so a retried event counts once. On by default for event
   * endpoints (`POST /v1/view`, `POST /v1/share`).
   */
  idempotent?: boolean;
};

/** Plain event counts: a retry without an Idempotency-Key could count twice. */
const EVENT_ENDPOINTS: ReadonlySet<string> = new Set(["POST /v1/view", "POST /v1/share"]);

const TIMED_OUT = Symbol("timed out");

/**
 * A client of the plaudit API. Each method is one logical call: a 429 or 503
 * is retried (at most `maxRetries` times) after the Retry-After the API
 * names, within the call's time budget; any other error, or one whose wait
 * would not fit, is thrown as a {@link PlauditError}.
 */
export class PlauditClient {
  readonly #baseUrl: string;
  readonly #token: ClientOptions["token"];
  readonly #fetch: (request: Request) => Promise<Response>;
  readonly #timeoutMs: number;
  readonly #maxRetries: number;
  readonly #maxRetryDelayMs: number;
  readonly #sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly #newKey: () => string;

  constructor(options: ClientOptions) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#token = options.token;
    this.#fetch = options.fetch ?? ((request) => fetch(request));
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#maxRetries = options.maxRetries ?? 2;
    this.#maxRetryDelayMs = options.maxRetryDelayMs ?? 5_000;
    this.#sleep = options.sleep ?? sleep;
    this.#newKey = options.idempotencyKey ?? (() => crypto.randomUUID());
  }

  /**
   * Like an item: `liked`, or `already_liked` when the user already did
   * (nothing counted), or `pending` (202) when the user's object could not be
   * reached in time and the like is kept to be applied later.
   */
  like(itemId: Id, itemType: ItemType, options?: CallOptions): Promise<LikeResult | PendingResult> {
    return this.#onItem("POST", "/v1/like", itemId, itemType, options);
  }

  /** Unlike an item: `unliked`, or `not_liked` (`pending`, as for a like). */
  unlike(itemId: Id, itemType: ItemType, options?: CallOptions): Promise<LikeResult | PendingResult> {
    return this.#onItem("DELETE", "/v1/like", itemId, itemType, options);
  }

  /** Save an item: `saved`, or `already_saved` (nothing counted). */
  save(itemId: Id, itemType: ItemType, options?: CallOptions): Promise<SaveResult | PendingResult> {
    return this.#onItem("POST", "/v1/save", itemId, itemType, options);
  }

  /** Unsave an item: `unsaved`, or `not_saved`. */
  unsave(itemId: Id, itemType: ItemType, options?: CallOptions): Promise<SaveResult | PendingResult> {
    return this.#onItem("DELETE", "/v1/save", itemId, itemType, options);
  }

  /** Count a view; its retries carry one Idempotency-Key, so it counts once. */
  view(itemId: Id, itemType: ItemType, options?: CallOptions): Promise<EventResult> {
    return this.#onItem("POST", "/v1/view", itemId, itemType, options);
  }

  /** Count a share, with the same Idempotency-Key rule as views. */
  share(itemId: Id, itemType: ItemType, options?: CallOptions): Promise<EventResult> {
    return this.#onItem("POST", "/v1/share", itemId, itemType, options);
  }

  /** One item's four counts (zeros for an item nobody touched); `uniqueViewers` adds its unique viewers. */
  count(itemId: string, itemType: ItemType, options?: CountOptions): Promise<CountResult> {
    const query = { item_id: itemId, item_type: itemType, ...(options?.uniqueViewers ? { unique_viewers: "true" } : {}) };
    return this.request("GET", "/v1/count", { ...options, query });
  }

  /** Counts of 1 to 100 items, keyed `item_type:item_id`; all four counters unless `counterTypes` says. */
  counts(items: readonly ItemRef[], counterTypes?: readonly CounterType[], options?: CountOptions): Promise<CountsResult> {
    return this.request("POST", "/v1/counts", {
      ...options,
      body: {
        items,
        ...(counterTypes ? { counter_types: counterTypes } : {}),
        ...(options?.uniqueViewers ? { unique_viewers: true } : {}),
      },
    });
  }

  /**
   * The same counts as `counts()`, by GET, so a CDN or the browser's cache can
   * keep them (public without a token, private with one).
   */
  countsByQuery(items: readonly ItemRef[], counterTypes?: readonly CounterType[], options?: CountOptions): Promise<CountsResult> {
    const query = {
      items: items.map((item) => `${item.item_type}:${item.item_id}`).join(","),
      counter_types: counterTypes?.join(","),
      ...(options?.uniqueViewers ? { unique_viewers: "true" } : {}),
    };
    return this.request("GET", "/v1/counts", { ...options, query });
  }

  /** An item's daily counts over the last `days` UTC days (default 30, at most 366). */
  history(itemId: string, itemType: ItemType, days?: number, options?: CallOptions): Promise<HistoryResult> {
    return this.request("GET", "/v1/history", { ...options, query: { item_id: itemId, item_type: itemType, days } });
  }

  /**
   * The live socket's URL: open it with any WebSocket, send
   * `{"type":"subscribe","items":[...]}` and read `LiveMessage`s.
   */
  liveUrl(): string {
    return `${this.#baseUrl.replace(/^http/, "ws")}/v1/live`;
  }

  /** Which of 1 to 100 items the caller likes (exact). */
  hasLiked(itemIds: readonly Id[], itemType: ItemType, options?: CallOptions): Promise<HasLikedResult> {
    return this.request("POST", "/v1/has_liked", { ...options, body: { item_ids: itemIds, item_type: itemType } });
  }

  /** One page of the caller's likes, newest first; pass the previous page's `next_cursor` for the next. */
  /** Who liked an item, newest first, one page at a time (pass `next_cursor` back); a followers-only item needs `options.grant`. */
  likers(itemId: Id, itemType: ItemType, page: { limit?: number; cursor?: string } = {}, options?: CallOptions): Promise<LikersResult> {
    return this.request("GET", "/v1/likers", { ...options, query: { item_id: itemId, item_type: itemType, limit: page.limit, cursor: page.cursor } });
  }

  myLikes(page: { itemType?: ItemType; limit?: number; cursor?: string } = {}, options?: CallOptions): Promise<MyLikesResult> {
    return this.request("GET", "/v1/me/likes", { ...options, query: { item_type: page.itemType, limit: page.limit, cursor: page.cursor } });
  }

  /** Sets an item's owner, visibility and hidden counts (service token); omitted fields take their defaults. */
  setItemSettings(itemId: Id, itemType: ItemType, settings: ItemSettingsInput, options?: CallOptions): Promise<ItemSettingsResult> {
    return this.request("PUT", `/v1/admin/items/${itemType}/${itemId}/settings`, { ...options, body: settings });
  }

  /** An item's settings (service token); an item never described is public with no owner. */
  itemSettings(itemId: Id, itemType: ItemType, options?: CallOptions): Promise<ItemSettingsResult> {
    return this.request("GET", `/v1/admin/items/${itemType}/${itemId}/settings`, options);
  }

  /** Records that `userId` blocks `blockedId` (service token): the blocked user can no longer like or save their items. */
  block(userId: Id, blockedId: Id, options?: CallOptions): Promise<BlockResult> {
    return this.request("PUT", `/v1/admin/users/${userId}/blocks/${blockedId}`, options);
  }

  /** Lifts a block (service token). */
  unblock(userId: Id, blockedId: Id, options?: CallOptions): Promise<BlockResult> {
    return this.request("DELETE", `/v1/admin/users/${userId}/blocks/${blockedId}`, options);
  }

  /** Up to 100 like edges from another system (service token); `npm run import` pages a whole file through this. */
  importEdges(edges: readonly ImportEdgeInput[], options?: CallOptions): Promise<ImportResult> {
    return this.request("POST", "/v1/admin/import", { ...options, body: { edges } });
  }

  /** One step of recomputing a store from the objects (service token); call again with `next` until it is null. `npm run rebuild` does this, paced. */
  rebuildStep(target: RebuildTarget, cursor: string | null = null, limit?: number, options?: CallOptions): Promise<RebuildStepResult> {
    return this.request("POST", "/v1/admin/rebuild", { ...options, body: { target, cursor, ...(limit === undefined ? {} : { limit }) } });
  }

  /** One step of moving the counts to a layout of `databases` count databases (service token); call again after `wait_ms` until `phase` is "done". `npm run reshard` does this. */
  reshardStep(databases: number, limit?: number, options?: CallOptions): Promise<ReshardStepResult> {
    return this.request("POST", "/v1/admin/reshard", { ...options, body: { databases, ...(limit === undefined ? {} : { limit }) } });
  }

  /** Deletes an account's likes and saves and every trace of them (service token); runs in the background: poll `userRemoval`. */
  deleteUser(userId: Id, options?: CallOptions): Promise<RemovalResult> {
    return this.request("DELETE", `/v1/admin/users/${userId}`, options);
  }

  /** Where a user's deletion or purge stands (service token). */
  userRemoval(userId: Id, options?: CallOptions): Promise<RemovalResult> {
    return this.request("GET", `/v1/admin/users/${userId}/removal`, options);
  }

  /** Purges fake accounts (service token): their likes are undone and they are barred until `liftBar`. */
  purge(userIds: readonly Id[], options?: CallOptions): Promise<PurgeResult> {
    return this.request("POST", "/v1/admin/purge", { ...options, body: { user_ids: userIds } });
  }

  /** Lets a purged account like again (service token); a deleted account stays barred (409). */
  liftBar(userId: Id, options?: CallOptions): Promise<RemovalResult> {
    return this.request("DELETE", `/v1/admin/users/${userId}/bar`, options);
  }

  /** Whether `userId` blocks `blockedId` (service token). */
  blocking(userId: Id, blockedId: Id, options?: CallOptions): Promise<BlockResult> {
    return this.request("GET", `/v1/admin/users/${userId}/blocks/${blockedId}`, options);
  }

  /** A user's undelivered changes and the limits that can apply to them (service token). */
  adminUser(userId: Id, options?: CallOptions): Promise<AdminUserResult> {
    return this.request("GET", `/v1/admin/users/${userId}`, options);
  }

  /** An item's exact counts and hot-item state (service token). */
  adminItem(itemId: Id, itemType: ItemType, options?: CallOptions): Promise<AdminItemResult> {
    return this.request("GET", `/v1/admin/items/${itemType}/${itemId}`, options);
  }

  /** Tells the service an item is about to turn hot, so it is split before its likes come (service token; a repeat changes nothing). */
  expectHot(itemId: Id, itemType: ItemType, options?: CallOptions): Promise<AdminItemResult> {
    return this.request("POST", `/v1/admin/items/${itemType}/${itemId}/hot`, options);
  }

  /** The dashboard's figures (service token). */
  dashboardData(options?: CallOptions): Promise<DashboardDataResult> {
    return this.request("GET", "/v1/admin/dashboard.json", options);
  }

  /** Prometheus metrics as text (service token). */
  metrics(options?: CallOptions): Promise<string> {
    return this.request("GET", "/metrics", options);
  }

  /** Liveness. */
  health(options?: CallOptions): Promise<HealthResult> {
    return this.request("GET", "/healthz", options);
  }

  /** The API's OpenAPI document. */
  openApi(options?: CallOptions): Promise<OpenApiDocument> {
    return this.request("GET", "/openapi.json", options);
  }

  /** The calls whose body is one item: like, unlike, save, unsave, view, share. */
  #onItem<T>(method: string, path: string, itemId: Id, itemType: ItemType, options?: CallOptions): Promise<T> {
    return this.request(method, path, { ...options, body: { item_id: itemId, item_type: itemType } });
  }

  /** Any endpoint, with the same auth, retries, timeout and typed errors as the methods above. */
  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs;
    const deadline = Date.now() + timeoutMs;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(TIMED_OUT), timeoutMs);
    const onAbort = () => controller.abort(options.signal?.reason);
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const idempotent = options.idempotent ?? EVENT_ENDPOINTS.has(`${method.toUpperCase()} ${path}`);
    const key = idempotent ? this.#newKey() : undefined;
    try {
      for (let attempt = 0; ; attempt++) {
        const response = await this.#send(method, path, options, key, controller.signal);
        if (response.ok) return (await readBody(response)) as T;
        const error = await toError(response);
        const waitMs = this.#retryWait(error, attempt, deadline);
        if (waitMs === undefined) throw error;
        await this.#sleep(waitMs, controller.signal);
      }
    } catch (error) {
      if (controller.signal.reason === TIMED_OUT) {
        throw new PlauditError(0, "timeout", `${method} ${path} did not complete within ${timeoutMs} ms.`);
      }
      throw error;
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
    }
  }

  /** How long to wait before retrying, or undefined to give up with this error. */
  #retryWait(error: PlauditError, attempt: number, deadline: number): number | undefined {
    if (!RETRYABLE_STATUSES.has(error.status) || attempt >= this.#maxRetries) return undefined;
    const ms = error.retryAfter !== undefined ? error.retryAfter * 1000 : backoffMs(attempt);
    if (ms > this.#maxRetryDelayMs || Date.now() + ms >= deadline) return undefined;
    return ms;
  }

  async #send(method: string, path: string, options: RequestOptions, key: string | undefined, signal: AbortSignal) {
    const headers = new Headers({ accept: "application/json" });
    const token = typeof this.#token === "function" ? await this.#token() : this.#token;
    if (token) headers.set("authorization", `Bearer ${token}`);
    if (key) headers.set("idempotency-key", key);
    if (options.grant) headers.set("x-plaudit-grant", options.grant);
    let body: string | undefined;
    if (options.body !== undefined) {
      headers.set("content-type", "application/json");
      body = JSON.stringify(options.body);
    }
    const request = new Request(this.#url(path, options.query), { method, headers, body, signal });
    try {
      return await this.#fetch(request);
    } catch (error) {
      if (signal.aborted) throw error;
      throw new PlauditError(0, "network_error", `${method} ${path} failed: ${String((error as Error)?.message ?? error)}`);
    }
  }

  #url(path: string, query: RequestOptions["query"]): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined) params.set(name, String(value));
    }
    const search = params.toString();
    return `${this.#baseUrl}${path}${search ? `?${search}` : ""}`;
  }
}

async function readBody(response: Response): Promise<unknown> {
  const text = await response.text();
  if (!(response.headers.get("content-type") ?? "").includes("json")) return text;
  try {
    return JSON.parse(text);
  } catch {
    throw new PlauditError(response.status, "invalid_response", "The API answered with malformed JSON.");
  }
}

async function toError(response: Response): Promise<PlauditError> {
  let body: Partial<ErrorBody> = {};
  try {
    body = (await response.json()) as Partial<ErrorBody>;
  } catch {
    // Not the API's JSON error (a proxy's page, say): the status alone speaks.
  }
  const retryAfter = retryAfterSeconds(response.headers.get("retry-after"), body.retry_after);
  return new PlauditError(
    response.status,
    typeof body.error === "string" ? body.error : `http_${response.status}`,
    typeof body.message === "string" ? body.message : `The API answered ${response.status}.`,
    Array.isArray(body.details) ? body.details : [],
    retryAfter,
  );
}
