import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signJwt } from "../../shared/jwt";
import { call, freshId, json, newUser, SECRETS, tokenFor } from "./helpers";

async function expectError(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toContain("application/json");
  const body = await json(response);
  expect(body.error).toBe(code);
  expect(typeof body.message).toBe("string");
  return body;
}

const b64 = (value: unknown) => btoa(JSON.stringify(value)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");

describe("the error table, in the order the API promises", () => {
  it("answers 404 for an unknown path", async () => {
    await expectError(await call("GET", "/v1/nope"), 404, "not_found");
  });

  it("answers 404, not 405, for a known path with a trailing slash", async () => {
    await expectError(await call("GET", "/v1/count/"), 404, "not_found");
  });

  it("answers 405 with Allow for a known path and another method", async () => {
    const res = await call("PUT", "/v1/like");
    await expectError(res, 405, "method_not_allowed");
    expect(res.headers.get("allow")).toContain("POST");
    expect(res.headers.get("allow")).toContain("DELETE");
    const get = await call("POST", "/v1/count");
    await expectError(get, 405, "method_not_allowed");
    expect(get.headers.get("allow")).toContain("GET");
  });

  it("answers 401 before 413, 415 or 400", async () => {
    await expectError(await call("POST", "/v1/like", { rawBody: "x".repeat(20 * 1024) }), 401, "unauthorized");
  });

  it("answers 401 for a missing, malformed, forged, expired or unsigned token", async () => {
    const user = freshId();
    const now = Math.floor(Date.now() / 1000);
    const forged = await signJwt({ sub: user, exp: now + 60 }, "not-the-secret");
    const expired = await tokenFor(user, { expiresIn: -10 });
    const noExp = await signJwt({ sub: user }, SECRETS[0]);
    const unsigned = `${b64({ alg: "none", typ: "JWT" })}.${b64({ sub: user, exp: now + 60 })}.`;
    const hs512 = `${b64({ alg: "HS512", typ: "JWT" })}.${b64({ sub: user, exp: now + 60 })}.${forged.split(".")[2]}`;
    const badSub = await tokenFor("007");
    const body = { item_id: "1", item_type: "post" };
    await expectError(await call("POST", "/v1/like", { body }), 401, "unauthorized");
    await expectError(await call("POST", "/v1/like", { body, headers: { authorization: "Basic abc" } }), 401, "unauthorized");
    for (const token of [forged, expired, noExp, unsigned, hs512, badSub, "not.a.jwt", "abc"]) {
      await expectError(await call("POST", "/v1/like", { body, token }), 401, "unauthorized");
    }
  });

  it("accepts a token signed with the second (rotated) secret", async () => {
    const token = await tokenFor(freshId(), { secret: SECRETS[1] });
    const res = await call("POST", "/v1/like", { token, body: { item_id: freshId(), item_type: "post" } });
    expect(res.status).toBe(200);
    expect((await json(res)).status).toBe("liked");
  });

  it("answers 413 for a body over 16 KiB", async () => {
    const { token } = await newUser();
    const padding = "x".repeat(20 * 1024);
    await expectError(
      await call("POST", "/v1/like", { token, body: { item_id: "1", item_type: "post", padding } }),
      413,
      "payload_too_large",
    );
  });

  it("answers 413 for a body over 16 KiB that declares a shorter length", async () => {
    const { token } = await newUser();
    const body = JSON.stringify({ item_id: "1", item_type: "post", padding: "x".repeat(20 * 1024) });
    const res = await SELF.fetch("https://plaudit.test/v1/like", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": "40" },
      body,
    });
    await expectError(res, 413, "payload_too_large");
  });

  it("answers 415 for a body that is not application/json", async () => {
    const { token } = await newUser();
    await expectError(
      await call("POST", "/v1/like", { token, rawBody: '{"item_id":"1","item_type":"post"}', headers: { "content-type": "text/plain" } }),
      415,
      "unsupported_media_type",
    );
  });

  it("answers 400 for malformed JSON", async () => {
    const { token } = await newUser();
    await expectError(
      await call("POST", "/v1/like", { token, rawBody: '{"item_id": "1",', headers: { "content-type": "application/json" } }),
      400,
      "invalid_request",
    );
  });

  it("answers 400 for 101 items, with the path in details", async () => {
    const items = Array.from({ length: 101 }, (_, i) => ({ item_id: String(i), item_type: "post" }));
    const body = await expectError(await call("POST", "/v1/counts", { body: { items } }), 400, "invalid_request");
    expect(body.details).toEqual([expect.objectContaining({ path: "items" })]);
  });

  it("lists every problem with a dotted path", async () => {
    const items = [
      { item_id: "1", item_type: "post" },
      { item_id: "007", item_type: "post" },
      { item_id: "2", item_type: "story" },
    ];
    const body = await expectError(
      await call("POST", "/v1/counts", { body: { items, counter_types: ["likes", "hugs"] } }),
      400,
      "invalid_request",
    );
    expect(body.details.map((d: { path: string }) => d.path).sort()).toEqual(
      ["counter_types.1", "items.1.item_id", "items.2.item_type"].sort(),
    );
  });

  it.each([
    ["18446744073709551616"],
    ["007"],
    [" 7"],
    ["-1"],
    ["+5"],
    [""],
    ["1e3"],
    [1.5],
    [-1],
    [9007199254740992],
    [null],
    [true],
  ])("rejects the item id %j with 400", async (item_id) => {
    const { token } = await newUser();
    const body = await expectError(
      await call("POST", "/v1/like", { token, body: { item_id, item_type: "post" } }),
      400,
      "invalid_request",
    );
    expect(body.details[0].path).toBe("item_id");
  });

  it.each([["18446744073709551615"], ["0"], [9007199254740991]])("accepts the item id %j", async (item_id) => {
    const { token } = await newUser();
    const res = await call("POST", "/v1/like", { token, body: { item_id, item_type: "post" } });
    expect(res.status).toBe(200);
  });

  it("rejects a non-canonical id in a query string", async () => {
    await expectError(await call("GET", "/v1/count?item_id=007&item_type=post"), 400, "invalid_request");
    await expectError(await call("GET", "/v1/count?item_id=1&item_type=story"), 400, "invalid_request");
    await expectError(await call("GET", "/v1/count?item_type=post"), 400, "invalid_request");
  });

  it("answers an untouched item with zeros, not 404", async () => {
    const item = freshId();
    const res = await call("GET", `/v1/count?item_id=${item}&item_type=reel`);
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toMatchObject({ item_id: item, item_type: "reel", counts: { likes: 0, views: 0, shares: 0, saves: 0 } });
    expect(new Date(body.as_of).toISOString()).toBe(body.as_of);
  });

  it("answers a CORS preflight for an allowed origin with 204", async () => {
    const res = await call("OPTIONS", "/v1/like", {
      headers: { origin: "https://app.example", "access-control-request-method": "POST" },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-allow-headers")).toContain("Authorization");
  });
});
