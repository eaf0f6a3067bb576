import { ErrorResponse } from "../../shared/schemas";
import type { Endpoint } from "./endpoint";
import { CLIENT_ERROR, ERROR_SPECS, errorStatuses } from "./errors";
import { SchemaComponents, toJsonSchema, type JsonSchema } from "./json-schema";
import { ENDPOINTS } from "./registry";

const DESCRIPTION = `Edge-first exact like counter: likes, unlikes, saves, views and shares.

- JSON in, JSON out. Ids (\`user_id\`, \`item_id\`) are unsigned 64-bit integers as canonical decimal strings (\`"456"\`); in a body a safe JSON integer is accepted too.
- Every error is \`{"error": "<code>", "message": "..."}\`, plus \`details\` (\`[{path, message}]\`, dotted paths) for validation errors and \`retry_after\` (seconds, also in \`Retry-After\`) for 429 and 503.
- Checks run in this order and the first that fails answers: unknown path 404; known path with another method 405 (with \`Allow\`); missing or bad token 401; wrong role 403; body over 16 KiB 413; body not \`application/json\` 415; invalid body or query 400; rate limit 429.
- Authentication: \`Authorization: Bearer <JWT>\`, either HS256 with a secret shared with the host app or a token of the host's identity provider (RS256, ES256 or EdDSA, keys from its JWKS, with the configured \`iss\` and \`aud\`); \`exp\` is required. The user is the token's user claim (\`sub\` by default), never a body field. Service endpoints need a service token (\`role: "service"\` by default, or a token of a separate service key set). See docs/auth.md.
- Privacy (docs/privacy.md): the host app tells plaudit each item's owner, visibility (\`public\`, \`followers\`, \`private\`) and whether its counts are hidden. Reads check every item for the viewer (the bearer token's user, optional on public reads, plus an \`X-Plaudit-Grant\`): an item the viewer may not see reads as one nobody touched (counts 0, \`has_liked\` false, no history, no likers, no live pushes, the same fields, headers and errors) and liking or saving it is 404; hidden counts are \`null\` for everyone but the owner, in every route and pushed message.
- Unknown body fields are ignored.`;

const BEARER = "bearerAuth";
const PROVIDER = "providerAuth";

const TAGS = [
  { name: "likes", description: "Per-user likes, exactly deduplicated" },
  { name: "counts", description: "Reading counters" },
  { name: "admin", description: "Operators' endpoints (service token)" },
  { name: "privacy", description: "Item settings and blocks, told by the host app (service token); see docs/privacy.md" },
  { name: "meta", description: "Liveness and this reference" },
];

function examples(values: Record<string, unknown>): Record<string, { value: unknown }> {
  return Object.fromEntries(Object.entries(values).map(([name, value]) => [name, { value }]));
}

function parameters(input: Endpoint["params"] | Endpoint["query"], location: "path" | "query"): JsonSchema[] {
  if (!input) return [];
  const json = toJsonSchema(input.schema, "input") as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: location,
      required: location === "path" || (json.required ?? []).includes(name),
      ...(description !== undefined ? { description } : {}),
      schema: rest,
      ...(input.example[name] !== undefined ? { example: input.example[name] } : {}),
    };
  });
}

const IDEMPOTENCY_KEY = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description: "One value per logical call, repeated on its retries, so a retried event counts once.",
  schema: { type: "string", minLength: 1, maxLength: 255 },
};

const GRANT = {
  name: "X-Plaudit-Grant",
  in: "header",
  required: false,
  description:
    "A short-lived JWT signed by the host app with the same keys as tokens, for the bearer token's user: `followers_of` lists the owners whose followers-only items this user may see. Needs the bearer token. See docs/privacy.md.",
  schema: { type: "string" },
};

function operation(endpoint: Endpoint, components: SchemaComponents): JsonSchema {
  const { body, response } = endpoint;
  const params = [
    ...parameters(endpoint.params, "path"),
    ...parameters(endpoint.query, "query"),
    ...(endpoint.idempotencyKey ? [IDEMPOTENCY_KEY] : []),
    ...(endpoint.viewer ? [GRANT] : []),
  ];
  const responses: Record<string, JsonSchema> = {
    [endpoint.upgrade ? "101" : "200"]: {
      description: response.description,
      content: {
        [response.contentType ?? "application/json"]: {
          schema: components.ref(response.schema, "output"),
          examples: examples(response.examples),
        },
      },
    },
  };
  if (endpoint.accepted) {
    responses["202"] = {
      description: endpoint.accepted.description,
      content: { "application/json": { schema: components.ref(endpoint.accepted.schema, "output"), examples: examples(endpoint.accepted.examples) } },
    };
  }
  for (const status of errorStatuses(endpoint)) {
    responses[String(status)] = { $ref: `#/components/responses/${ERROR_SPECS[status]!.name}` };
  }
  responses["4XX"] = { $ref: `#/components/responses/${CLIENT_ERROR.name}` };
  const roleNote = endpoint.auth === "service" ? ' Needs a token with `role: "service"`.' : "";
  return {
    operationId: endpoint.operationId,
    tags: [endpoint.tag],
    summary: endpoint.summary,
    ...(endpoint.description || roleNote ? { description: `${endpoint.description ?? ""}${roleNote}`.trim() } : {}),
    // Public operations say so (an empty list) rather than leave a reader to guess.
    security: endpoint.auth === "none" ? [] : [{ [BEARER]: [] }, { [PROVIDER]: [] }],
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(body
      ? {
          requestBody: {
            required: true,
            content: { "application/json": { schema: components.ref(body.schema, "input"), examples: examples(body.examples) } },
          },
        }
      : {}),
    responses,
  };
}

/** The error responses the operations refer to, and only those (an unused component is noise to a reader). */
function errorResponses(components: SchemaComponents, endpoints: readonly Endpoint[]): Record<string, JsonSchema> {
  const shape = components.ref(ErrorResponse, "output");
  const statuses = [...new Set(endpoints.flatMap(errorStatuses))].sort((a, b) => a - b);
  const specs = [...statuses.map((status) => ERROR_SPECS[status]!), CLIENT_ERROR];
  return Object.fromEntries(
    specs.map((spec) => [
      spec.name,
      {
        description: spec.description,
        ...(spec.headers ? { headers: spec.headers } : {}),
        content: {
          "application/json": {
            schema: spec.code ? { allOf: [shape, { type: "object", properties: { error: { const: spec.code } } }] } : shape,
            example: spec.example,
          },
        },
      },
    ]),
  );
}

function build(endpoints: readonly Endpoint[]): JsonSchema {
  const components = new SchemaComponents();
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const endpoint of endpoints) {
    (paths[endpoint.path] ??= {})[endpoint.method] = operation(endpoint, components);
  }
  const responses = errorResponses(components, endpoints);
  return {
    openapi: "3.1.0",
    info: {
      title: "plaudit",
      version: "1.0.0",
      description: DESCRIPTION,
      license: { name: "Apache-2.0", identifier: "Apache-2.0" },
    },
    servers: [{ url: "/", description: "The deployment serving this document" }],
    tags: TAGS,
    paths,
    components: {
      schemas: components.schemas,
      responses,
      securitySchemes: {
        [BEARER]: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description:
            'HS256 JWT signed with a secret shared with the host app (`AUTH_SECRET`, rotation: the first signs, all verify), with `sub` (the user id) and `exp`; `role: "service"` for service endpoints. `npm run token` mints one locally.',
        },
        [PROVIDER]: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description:
            "JWT of the host's identity provider (Auth0, Clerk, Keycloak, ...): RS256, ES256 or EdDSA (`AUTH_ALGORITHMS`), verified with the keys of its JWKS (`AUTH_JWKS_URL`), with the configured `iss` and `aud` and `exp`; the user is the `AUTH_USER_CLAIM` claim. See docs/auth.md.",
        },
      },
    },
  };
}

let built: JsonSchema | undefined;

/** The OpenAPI 3.1 document, built once per isolate from the endpoint registry. */
export function openApiDocument(): JsonSchema {
  built ??= build(ENDPOINTS);
  return built;
}
