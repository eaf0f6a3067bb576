// The front references run plaudit's Worker: over a one-commit user object
// (bench/reference/front.ts), whose distance from the like reference the
// bench reads as what plaudit's front costs a like, and over the pipeline
// reference's objects (bench/reference/front-pipeline.ts), the floor of
// plaudit's design with plaudit's front. That holds only if their likes go
// through plaudit's checks and answers, if their objects decide each edge
// once, and if the second brings each count to D1 and reports its work
// until it is done: all are checked here.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idRange, serviceToken, userTokens } from "../../bench/lib/plaudit";
import { removeStateDir, startReference, type LocalServer } from "../../bench/lib/server";
import { referenceBusy, referenceRows } from "./reference-state";

const SECRET = "front-reference-test-secret-0123456789abcdef";

describe.each(["front", "front-pipeline"])("the %s reference", (name) => {
  let server: LocalServer;
  let tokens: Map<string, string>;
  let service: string;
  const [item, hidden, privateItem, owner, ...users] = idRange(7, 918_000n);

  beforeAll(async () => {
    server = await startReference(name, SECRET);
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

  /** The item's likes in the reference's D1. */
  const storedLikes = (id: string) => referenceRows<{ likes: number }>(server, name, `SELECT likes FROM item_counts WHERE item_id = '${id}'`)[0]?.likes ?? null;

  const busy = () => referenceBusy(server);

  const toggle = (path: "/v1/like" | "/v1/save", user: string, id: string, on: boolean) =>
    call(on ? "POST" : "DELETE", path, tokens.get(user)!, { item_type: "post", item_id: id });

  it("answers each like as plaudit does, its users' object deciding each edge once", async () => {
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
    if (name === "front") {
      // A save is an edge of its own: the like above does not make it "already" saved.
      expect((await toggle("/v1/save", a!, item!, true)).body).toMatchObject({ status: "saved", user_saved: true });
      return;
    }
    // The pipeline's work after the answers: the count in D1, then nothing left to do.
    await expect.poll(() => storedLikes(item!), { timeout: 20_000, interval: 500 }).toBe(1);
    await expect.poll(busy, { timeout: 30_000, interval: 500 }).toBe(0);
  }, 90_000);

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
  });
});
