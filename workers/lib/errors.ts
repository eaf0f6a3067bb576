import type { ErrorResponse } from "../../shared/schemas";

export type ErrorDetail = { path: string; message: string };

/**
 * Every failure the API reports on purpose. `onError` turns it into the one
 * JSON error shape; anything else thrown is an internal error, logged and
 * answered without its stack.
 */
export class ApiError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 426 | 429 | 500 | 503,
    readonly code: string,
    message: string,
    readonly extra: { details?: ErrorDetail[]; retryAfter?: number; headers?: Record<string, string> } = {},
  ) {
    super(message);
  }

  toResponse(): Response {
    const body: ErrorResponse = { error: this.code, message: this.message };
    if (this.extra.details) body.details = this.extra.details;
    const headers = new Headers({ "content-type": "application/json; charset=utf-8", ...this.extra.headers });
    if (this.extra.retryAfter !== undefined) {
      body.retry_after = this.extra.retryAfter;
      headers.set("retry-after", String(this.extra.retryAfter));
    }
    return new Response(JSON.stringify(body), { status: this.status, headers });
  }
}

export const invalid = (message: string, details?: ErrorDetail[]) =>
  new ApiError(400, "invalid_request", message, details ? { details } : {});

export const unauthorized = (message: string) =>
  new ApiError(401, "unauthorized", message, { headers: { "www-authenticate": 'Bearer realm="plaudit"' } });

export const unavailable = (message: string, retryAfter = 1) =>
  new ApiError(503, "unavailable", message, { retryAfter });

/** A purged or deleted account (docs/privacy.md, "Removing a user"): it may take back a like, never add one. */
export const barred = () => new ApiError(403, "barred", "This account may not like or save: it was purged or deleted.");
