// The front reference (bench/reference/front.ts) is plaudit's Worker over a
// one-commit user object: the bench reads its distance from the like
// reference as what plaudit's front costs a like. That holds only if its
// likes go through plaudit's checks and answers, and if its object decides
// each edge once: both are checked here.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idRange, serviceToken, userTokens } from "../../bench/lib/plaudit";
import { removeStateDir, startReference, type LocalServer } from "../../bench/lib/server";

const SECRET = "front-reference-test-secret-0123456789abcdef";

describe("the front reference", () => {
  let server: LocalServer;
  let tokens: Map<string, string>;
  let service: string;
  const [item, hidden, privateItem, owner, ...users] = idRange(7, 918_000n);

  beforeAll(async () => {
    server = await startReference("front", SECRET);
    tokens = await userTokens([owner!, ...users], SECRET);
    service = await serviceToken(SECRET);
  });

  afterAll(async () => {
    await server?.kill();
    if (server) removeStateDir(server.stateDir);
  });

  async function call(method: string, path: string, token: string | null, body?: unknown) {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (token) headers.authorization = `Bearer ${token}`;
    const response = await fetch(`${server.url}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: response.status, body: (await response.json()) as Record<string, unknown>, requestId: response.headers.get("x-request-id") };
  }

  const toggle = (path: "/v1/like" | "/v1/save", user: string, id: string, on: boolean) =>
    call(on ? "POST" : "DELETE", path, tokens.get(user)!, { item_type: "post", item_id: id });

  it("answers each like as plaudit does, from one commit that decides the edge once", async () => {
    const [a, b] = users;
    const steps: [string, boolean, string, number][] = [
      [a!, true, "liked", 1],
      [a!, true, "already_liked", 1],
      [b!, true, "liked", 2],
      [a!, false, "unliked", 1],
      [a!, false, "not_liked", 1],
    ];
    for (const [user, on, status, count] of steps) {
      const answer = await toggle("/v1/like", user, item!, on);
      expect(answer).toMatchObject({ status: 200, body: { status, count, count_formatted: String(count), user_liked: on } });
      expect(answer.requestId).toMatch(/\S/);
    }
    // A save is an edge of its own: the like above does not make it "already" saved.
    expect((await toggle("/v1/save", a!, item!, true)).body).toMatchObject({ status: "saved", user_saved: true });
  }, 60_000);

  it("refuses and hides what plaudit's checks refuse and hide", async () => {
    const [a] = users;
    expect((await call("POST", "/v1/like", null, { item_type: "post", item_id: item })).status).toBe(401);
    const invalid = await toggle("/v1/like", a!, "not-an-id", true);
    expect(invalid).toMatchObject({ status: 400, body: { error: "invalid_request" } });

    for (const [id, settings] of [
      [hidden!, { owner_id: owner, hide_counts: true }],
      [privateItem!, { owner_id: owner, visibility: "private" }],
    ] as const) {
      expect((await call("PUT", `/v1/admin/items/post/${id}/settings`, service, settings)).status).toBe(200);
    }
    expect(await toggle("/v1/like", a!, hidden!, true)).toMatchObject({ status: 200, body: { status: "liked", count: null, count_formatted: null } });
    expect(await toggle("/v1/like", owner!, hidden!, true)).toMatchObject({ status: 200, body: { status: "liked", count: 2 } });
    expect(await toggle("/v1/like", a!, privateItem!, true)).toMatchObject({ status: 404, body: { error: "not_found" } });
    expect(await toggle("/v1/like", owner!, privateItem!, true)).toMatchObject({ status: 200, body: { status: "liked", count: 1 } });
  }, 60_000);
});
