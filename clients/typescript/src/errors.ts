import type { ErrorDetail } from "./types.js";

/** Codes the API answers with, plus the client's own (`timeout`, `network_error`, `invalid_response`: status 0). */
export type ErrorCode =
  | "invalid_request"
  | "unauthorized"
  | "forbidden"
  | "barred"
  | "not_purged"
  | "not_found"
  | "method_not_allowed"
  | "payload_too_large"
  | "unsupported_media_type"
  | "rate_limited"
  | "unavailable"
  | "internal_error"
  | "timeout"
  | "network_error"
  | "invalid_response"
  | (string & {});

/** Every failure of a call: an error answer of the API, or one the client met on the way. */
export class PlauditError extends Error {
  override readonly name = "PlauditError";

  constructor(
    /** The HTTP status; 0 when no answer came (timeout, network). */
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    /** One entry per problem for `invalid_request`, with dotted paths (`items.3.item_id`). */
    readonly details: readonly ErrorDetail[] = [],
    /** Seconds the API asked to wait (429, 503), when it said. */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}
