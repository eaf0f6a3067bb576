import type { Auth, Endpoint } from "./endpoint";

type ErrorSpec = {
  name: string;
  /** The one `error` code of this status; absent where the response stands for several. */
  code?: string;
  description: string;
  example: Record<string, unknown>;
  headers?: Record<string, { description: string; schema: Record<string, unknown> }>;
};

const RETRY_AFTER = {
  "Retry-After": { description: "Seconds to wait before retrying", schema: { type: "integer", minimum: 1 } },
};

/** Every error status of the API contract, each with the one JSON error shape. */
export const ERROR_SPECS: Record<number, ErrorSpec> = {
  400: {
    name: "InvalidRequest",
    code: "invalid_request",
    description: "Bad JSON, wrong types, out-of-range ids, unknown item or counter type, too many items. `details` lists every problem.",
    example: {
      error: "invalid_request",
      message: "The request body is invalid.",
      details: [{ path: "item_type", message: "must be one of post, reel, comment" }],
    },
  },
  401: {
    name: "Unauthorized",
    code: "unauthorized",
    description: "Missing, malformed, expired or badly signed bearer token.",
    example: { error: "unauthorized", message: "An Authorization: Bearer <token> header is required." },
    headers: { "WWW-Authenticate": { description: "`Bearer realm=\"plaudit\"`", schema: { type: "string" } } },
  },
  403: {
    name: "Forbidden",
    description:
      "`forbidden`: the token is valid but its role may not call this endpoint. `barred` (likes and saves): the account was purged or deleted and may not like or save; it may still unlike.",
    example: { error: "forbidden", message: "This endpoint needs a service token." },
  },
  409: {
    name: "Conflict",
    code: "not_purged",
    description: "Only a purged account's bar can be lifted: a deleted account stays barred.",
    example: { error: "not_purged", message: "Only a purged account's bar can be lifted." },
  },
  404: {
    name: "NotFound",
    code: "not_found",
    description: "No such endpoint, or no such item for this user: one they may not see, or whose owner blocks them (the same answer, so neither is revealed).",
    example: { error: "not_found", message: "No such endpoint: /v1/nope." },
  },
  405: {
    name: "MethodNotAllowed",
    code: "method_not_allowed",
    description: "A known path asked with another method; `Allow` names the methods it has.",
    example: { error: "method_not_allowed", message: "PUT is not allowed here; use DELETE, POST." },
    headers: { Allow: { description: "The methods this path answers", schema: { type: "string" } } },
  },
  413: {
    name: "PayloadTooLarge",
    code: "payload_too_large",
    description: "The request body is over 16 KiB.",
    example: { error: "payload_too_large", message: "The request body must be at most 16384 bytes." },
  },
  415: {
    name: "UnsupportedMediaType",
    code: "unsupported_media_type",
    description: "The request body is not `application/json`.",
    example: { error: "unsupported_media_type", message: "The request body must be application/json." },
  },
  426: {
    name: "UpgradeRequired",
    code: "upgrade_required",
    description: "A WebSocket endpoint was called without `Upgrade: websocket`.",
    example: { error: "upgrade_required", message: "This endpoint is a WebSocket: send Upgrade: websocket." },
  },
  429: {
    name: "RateLimited",
    code: "rate_limited",
    description: "Too many requests for this user; wait `Retry-After` seconds.",
    example: { error: "rate_limited", message: "Too many requests for this user; retry later.", retry_after: 2 },
    headers: RETRY_AFTER,
  },
  503: {
    name: "Unavailable",
    code: "unavailable",
    description: "The service cannot answer right now; retry after `Retry-After` seconds.",
    example: { error: "unavailable", message: "The service is busy; retry shortly.", retry_after: 1 },
    headers: RETRY_AFTER,
  },
};

const AUTH_ERRORS: Record<Auth, number[]> = { none: [], user: [401], service: [401, 403] };

/**
 * Every operation also names this `4XX` range: any other client error (404
 * for a path with a trailing slash, 405 with `Allow` for another method on
 * the path) comes in the same shape, so a client needs one error type.
 */
export const CLIENT_ERROR: ErrorSpec = {
  name: "ClientError",
  description: "Any other client error, in the same JSON shape; `error` names it (405 answers with `Allow`).",
  example: ERROR_SPECS[405]!.example,
  headers: ERROR_SPECS[405]!.headers,
};

/** The statuses one endpoint can answer with, in the order its checks run. */
export function errorStatuses(endpoint: Endpoint): number[] {
  const statuses = new Set<number>(AUTH_ERRORS[endpoint.auth]);
  if (endpoint.viewer) statuses.add(401);
  if (endpoint.body) [413, 415, 400].forEach((s) => statuses.add(s));
  if (endpoint.params || endpoint.query) statuses.add(400);
  endpoint.errors?.forEach((s) => statuses.add(s));
  return [...statuses].sort((a, b) => a - b);
}
