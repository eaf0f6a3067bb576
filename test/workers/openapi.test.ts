import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import committed from "../../docs/openapi.json";
import { ErrorResponse } from "../../shared/schemas";
import { app } from "../../workers/app";
import { ENDPOINTS } from "../../workers/openapi/registry";
import { call, freshId, json, tokenFor } from "./helpers";

type Operation = { security?: unknown[]; responses: Record<string, { $ref?: string }> };
type Doc = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }>;
    responses: Record<string, { headers?: Record<string, unknown>; content: Record<string, { schema: unknown; example: { error: string } }> }>;
    securitySchemes: Record<string, unknown>;
  };
};

async function served(): Promise<Doc> {
  return json<Doc>(await call("GET", "/openapi.json"));
}

/** "POST /v1/admin/users/{user_id}" for every route the Hono app answers (middleware entries are method ALL). */
function appRoutes(): Set<string> {
  return new Set(
    app.routes.filter((r) => r.method !== "ALL").map((r) => `${r.method} ${r.path.replace(/:([^/]+)/g, "{$1}")}`),
  );
}

function documentedRoutes(doc: Doc): Set<string> {
  return new Set(
    Object.entries(doc.paths).flatMap(([path, operations]) => Object.keys(operations).map((m) => `${m.toUpperCase()} ${path}`)),
  );
}

/** A request for an endpoint built from its own documented examples. */
async function exampleRequest(endpoint: (typeof ENDPOINTS)[number], token?: string): Promise<Response> {
  const path = endpoint.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(endpoint.params!.example[name]!));
  const query = endpoint.query ? `?${new URLSearchParams(endpoint.query.example)}` : "";
  const body = endpoint.body ? Object.values(endpoint.body.examples)[0] : undefined;
  const headers = endpoint.upgrade ? { headers: { upgrade: "websocket" } } : {};
  return call(endpoint.method.toUpperCase(), `${path}${query}`, { ...(token ? { token } : {}), ...(body ? { body } : {}), ...headers });
}

describe("GET /openapi.json", () => {
  it("serves an OpenAPI 3.1 document as JSON", async () => {
    const res = await call("GET", "/openapi.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect((await json<Doc>(res)).openapi).toBe("3.1.0");
  });

  it("documents every route the app answers", async () => {
    const documented = documentedRoutes(await served());
    const missing = [...appRoutes()].filter((route) => !documented.has(route));
    expect(missing, "add an entry to workers/openapi/registry.ts for each").toEqual([]);
  });

  it("documents no route the app lacks", async () => {
    const routes = appRoutes();
    const extra = [...documentedRoutes(await served())].filter((route) => !routes.has(route));
    expect(extra).toEqual([]);
  });

  it("is what docs/openapi.json holds (run `npm run openapi` when this fails)", async () => {
    expect(committed).toEqual(await served());
  });

  it("describes the error statuses its operations answer, and any other 4xx, with the one JSON error shape", async () => {
    const doc = await served();
    const byCode = Object.values(doc.components.responses).map((r) => r.content["application/json"]!);
    expect(byCode.map((c) => c.example.error).sort()).toEqual(
      [
        "forbidden",
        "invalid_request",
        "method_not_allowed",
        "not_found",
        "not_purged",
        "payload_too_large",
        "rate_limited",
        "unauthorized",
        "unavailable",
        "unsupported_media_type",
        "upgrade_required",
      ].sort(),
    );
    for (const content of byCode) {
      expect(JSON.stringify(content.schema)).toContain("#/components/schemas/ErrorResponse");
      expect(ErrorResponse.safeParse(content.example).success).toBe(true);
    }
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, { responses }] of Object.entries(operations)) {
        expect(responses["4XX"], `${method} ${path}`).toEqual({ $ref: "#/components/responses/ClientError" });
      }
    }
    expect(doc.components.schemas.ErrorResponse!.required).toEqual(["error", "message"]);
    expect(Object.keys(doc.components.schemas.ErrorResponse!.properties!)).toEqual(["error", "message", "details", "retry_after"]);
  });

  it("documents Retry-After on 429 and 503 and Allow on other client errors (405)", async () => {
    const { responses } = (await served()).components;
    expect(Object.keys(responses.RateLimited!.headers!)).toEqual(["Retry-After"]);
    expect(Object.keys(responses.Unavailable!.headers!)).toEqual(["Retry-After"]);
    expect(Object.keys(responses.ClientError!.headers!)).toEqual(["Allow"]);
  });

  it("declares bearer JWT security schemes: a shared secret, or the identity provider's keys", async () => {
    expect((await served()).components.securitySchemes).toEqual({
      bearerAuth: expect.objectContaining({ type: "http", scheme: "bearer", bearerFormat: "JWT" }),
      providerAuth: expect.objectContaining({ type: "http", scheme: "bearer", bearerFormat: "JWT" }),
    });
  });

  it("marks as secured exactly the endpoints that answer 401 without a token, and the others as public", async () => {
    const doc = await served();
    for (const endpoint of ENDPOINTS) {
      const { security } = doc.paths[endpoint.path]![endpoint.method]!;
      expect(security, `${endpoint.method} ${endpoint.path}`).toBeInstanceOf(Array);
      const secured = security!.length > 0;
      const res = await exampleRequest(endpoint);
      expect(res.status === 401, `${endpoint.method} ${endpoint.path}`).toBe(secured);
      if (secured) expect(doc.paths[endpoint.path]![endpoint.method]!.responses).toHaveProperty("401");
    }
  });

  it("gives examples that the endpoint's own schemas accept", () => {
    for (const endpoint of ENDPOINTS) {
      for (const input of [endpoint.params, endpoint.query]) {
        if (input) expect(input.schema.safeParse(input.example).success, `${endpoint.operationId} params or query`).toBe(true);
      }
      for (const example of Object.values(endpoint.body?.examples ?? {})) {
        expect(endpoint.body!.schema.safeParse(example).success, `${endpoint.operationId} body`).toBe(true);
      }
      for (const example of Object.values(endpoint.response.examples)) {
        expect(endpoint.response.schema.safeParse(example).success, `${endpoint.operationId} response`).toBe(true);
      }
    }
  });

  it("describes what each endpoint really answers to its example request", async () => {
    const token = await tokenFor(freshId(), { role: "service" });
    for (const endpoint of ENDPOINTS) {
      const res = await exampleRequest(endpoint, token);
      if (endpoint.upgrade) {
        expect(res.status, `${endpoint.method} ${endpoint.path}`).toBe(101);
        res.webSocket!.accept();
        res.webSocket!.close(1000);
        continue;
      }
      expect(res.status, `${endpoint.method} ${endpoint.path}`).toBe(200);
      const body = endpoint.response.contentType?.startsWith("text/") ? await res.text() : await res.json();
      const parsed = endpoint.response.schema.safeParse(body);
      expect(parsed.error?.issues ?? [], `${endpoint.method} ${endpoint.path}`).toEqual([]);
    }
  });
});

describe("GET /docs", () => {
  /** What the page loads: every src= and href= it names. */
  async function page(): Promise<{ res: Response; assets: string[] }> {
    const res = await call("GET", "/docs");
    const html = await res.clone().text();
    return { res, assets: [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!) };
  }

  it("serves an HTML page that loads Swagger UI and this document", async () => {
    const { res, assets } = await page();
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(assets).toEqual([
      "/docs/vendor/favicon-32x32.png",
      "/docs/vendor/swagger-ui.css",
      "/docs/vendor/swagger-ui-bundle.js",
      "/docs/init.js",
    ]);
  });

  it("lets the page reach only its own origin", async () => {
    const { res } = await page();
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toMatch(/https?:/);
  });

  // In production and `npm start` the asset layer answers these paths before the Worker; here it is asked directly.
  it("has every asset it references served as a static file with its content type", async () => {
    const expected: Record<string, string> = { js: "javascript", css: "text/css", png: "image/png" };
    for (const asset of (await page()).assets) {
      const res = await env.ASSETS.fetch(new Request(`http://plaudit.test${asset}`));
      expect(res.status, asset).toBe(200);
      expect(res.headers.get("content-type"), asset).toContain(expected[asset.split(".").pop()!]);
      expect((await res.arrayBuffer()).byteLength, asset).toBeGreaterThan(0);
    }
  });

  it("starts Swagger UI on /openapi.json without an online validator", async () => {
    const script = await (await env.ASSETS.fetch(new Request("http://plaudit.test/docs/init.js"))).text();
    expect(script).toContain('url: "/openapi.json"');
    expect(script).toContain("validatorUrl: null");
  });
});
