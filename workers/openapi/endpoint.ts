import type { z } from "zod";

export type HttpMethod = "get" | "post" | "put" | "patch" | "delete";

/** Who may call: anyone, any valid bearer token, or a token with `role: "service"`. */
export type Auth = "none" | "user" | "service";

/** Error statuses an endpoint can answer besides the ones its auth and inputs imply. */
export type ExtraErrorStatus = 403 | 404 | 409 | 426 | 429 | 503;

/**
 * One endpoint of the HTTP API, as the OpenAPI document describes it. The
 * schemas are the ones the route validates with (from shared/schemas.ts), so
 * the document cannot drift from the code.
 */
export type Endpoint = {
  method: HttpMethod;
  /** OpenAPI path syntax (`/v1/admin/users/{user_id}`); Hono's `:user_id` maps to it. */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  auth: Auth;
  /** Path parameters: one key per `{name}` in `path`, with an example value of each. */
  params?: { schema: z.ZodObject; example: Record<string, string> };
  /** The query string, with an example; the tests call the endpoint with the examples. */
  query?: { schema: z.ZodObject; example: Record<string, string> };
  /** A JSON request body; implies 400, 413 and 415. */
  body?: { schema: z.ZodType; examples: Record<string, unknown> };
  /** A WebSocket: success is 101 Switching Protocols, and `response` describes the messages the server sends. */
  upgrade?: boolean;
  /** Event endpoints: a client's retries of one call share an Idempotency-Key and count once. */
  idempotencyKey?: boolean;
  /**
   * Answers depend on who asks (docs/privacy.md): the optional X-Plaudit-Grant
   * header is documented, and a token or grant that is sent and bad is a 401.
   */
  viewer?: boolean;
  response: {
    description: string;
    schema: z.ZodType;
    /** Defaults to JSON. */
    contentType?: string;
    examples: Record<string, unknown>;
  };
  /** A second success: 202 Accepted, for work kept to be done later. */
  accepted?: { description: string; schema: z.ZodType; examples: Record<string, unknown> };
  /** Statuses not implied by `auth`, `params`, `query` or `body` (those are added for you). */
  errors?: ExtraErrorStatus[];
};
