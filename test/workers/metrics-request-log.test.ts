import { createExecutionContext, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { app } from "../../workers/app";
import { accumulator } from "../../metrics/accumulators";
import { call, freshId, tokenFor } from "./helpers";
import { failNext } from "./fault-points";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

afterEach(() => {
  vi.restoreAllMocks();
});

/** The JSON lines a console method was called with. */
function lines(spy: { mock: { calls: unknown[][] } }): Array<Record<string, unknown>> {
  return spy.mock.calls.map(([first]) => JSON.parse(String(first)) as Record<string, unknown>);
}

describe("request ids", () => {
  it("answers every request with a fresh X-Request-Id", async () => {
    const [a, b] = await Promise.all([call("GET", "/healthz"), call("GET", "/healthz")]);
    expect(a.headers.get("x-request-id")).toMatch(UUID);
    expect(a.headers.get("x-request-id")).not.toBe(b.headers.get("x-request-id"));
  });

  it("keeps a caller's well-formed request id", async () => {
    const res = await call("GET", "/healthz", { headers: { "x-request-id": "client-7f3a9c01" } });
    expect(res.headers.get("x-request-id")).toBe("client-7f3a9c01");
  });

  it("replaces a caller's malformed request id", async () => {
    const res = await call("GET", "/healthz", { headers: { "x-request-id": "bad id\twith spaces" } });
    expect(res.headers.get("x-request-id")).toMatch(UUID);
  });

  it("puts the request id on error answers too", async () => {
    const res = await call("GET", "/no-such-path");
    expect(res.status).toBe(404);
    expect(res.headers.get("x-request-id")).toMatch(UUID);
  });
});

describe("JSON log lines", () => {
  it("writes one error line with the request id for a server error", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    await runInDurableObject(accumulator(env, 0), (instance) => {
      failNext(instance, "read", 1);
    });
    const res = await call("GET", "/metrics", { token: await tokenFor(freshId(), { role: "service" }) });
    expect(res.status).toBe(503);
    const failed = lines(errors).filter((l) => l.event === "request_failed");
    expect(failed).toEqual([
      expect.objectContaining({ level: "error", request_id: res.headers.get("x-request-id"), route: "/metrics", status: 503 }),
    ]);
  });

  it("writes one warning line for a request slower than SLOW_REQUEST_MS", async () => {
    const warnings = vi.spyOn(console, "warn").mockImplementation(() => {});
    const ctx = createExecutionContext();
    const token = await tokenFor(freshId());
    const request = new Request("http://plaudit.test/v1/like", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ item_id: freshId(), item_type: "post" }),
    });
    const res = await app.fetch(request, { ...env, SLOW_REQUEST_MS: "0" }, ctx);
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(200);
    const slow = lines(warnings).filter((l) => l.event === "slow_request");
    expect(slow).toEqual([
      expect.objectContaining({ request_id: res.headers.get("x-request-id"), route: "/v1/like", method: "POST", status: 200 }),
    ]);
  });

  it("writes nothing for a fast, successful request", async () => {
    const logged = [vi.spyOn(console, "warn"), vi.spyOn(console, "error")];
    expect((await call("GET", "/healthz")).status).toBe(200);
    expect(logged.flatMap((spy) => spy.mock.calls)).toEqual([]);
  });
});
