import { beforeAll, describe, expect, it } from "vitest";
import committed from "../../docs/openapi.json";
import { weakETag } from "../../workers/reads/http-cache";
import { call, freshId, json, newUser } from "./helpers";
import { withVars } from "./idp";
import { deliver } from "./pipeline-helpers";
import { countsEmission, grantFor, liveSocket, seed, setSettings, type Reader } from "./privacy-helpers";

/**
 * Every operation of the OpenAPI document, walked: each read of an item has a
 * case comparing what a viewer who may not see an item gets with what an
 * untouched item gets; every other operation says why it has none. A route
 * added to the document without an entry here fails the first test.
 */
type Answer = { status: number; headers: Record<string, string | null>; body: unknown };
type ReadCase = (item: string, reader: Reader, on: Env) => Promise<Response>;

const q = (item: string) => `item_id=${item}&item_type=post`;
const auth = (reader: Reader) => ({
  ...(reader.token ? { token: reader.token } : {}),
  ...(reader.grant ? { headers: { "x-plaudit-grant": reader.grant } } : {}),
});

const READS: Record<string, ReadCase> = {
  "GET /v1/count": (item, r, on) => call("GET", `/v1/count?${q(item)}&unique_viewers=true`, { ...auth(r), env: on }),
  "POST /v1/counts": (item, r, on) =>
    call("POST", "/v1/counts", { ...auth(r), env: on, body: { items: [{ item_id: item, item_type: "post" }], unique_viewers: true } }),
  "GET /v1/counts": (item, r, on) => call("GET", `/v1/counts?items=post:${item}&unique_viewers=true`, { ...auth(r), env: on }),
  "POST /v1/has_liked": (item, r, on) => call("POST", "/v1/has_liked", { ...auth(r), env: on, body: { item_ids: [item], item_type: "post" } }),
  "GET /v1/history": (item, r, on) => call("GET", `/v1/history?${q(item)}&days=3`, { ...auth(r), env: on }),
  "GET /v1/likers": (item, r, on) => call("GET", `/v1/likers?${q(item)}&limit=10`, { ...auth(r), env: on }),
};

/** Operations with no per-item read to compare, and where their privacy is checked instead. */
const NOT_ITEM_READS: Record<string, string> = {
  "GET /v1/live": "the socket: compared below, message by message",
  "GET /v1/me/likes": "the caller's own likes, no item parameter: privacy-seams.test.ts checks the rule for a like out of sight",
  "POST /v1/like": "write: privacy-writes.test.ts",
  "DELETE /v1/like": "write: privacy-writes.test.ts",
  "POST /v1/save": "write: privacy-writes.test.ts",
  "DELETE /v1/save": "write: privacy-writes.test.ts",
  "POST /v1/view": "write: privacy-writes.test.ts",
  "POST /v1/share": "write: privacy-writes.test.ts",
  "GET /live": "a static page",
  "GET /healthz": "no item data",
  "GET /openapi.json": "no item data",
  "GET /docs": "no item data",
  "GET /dashboard": "a static page; its data is a service view",
};

/** Errors and status codes keep their numbers; everything else that counts becomes null for a hidden item. */
const KEPT_NUMBERS = new Set(["took_ms", "retry_after"]);
function hidden(value: unknown, key = ""): unknown {
  if (typeof value === "number") return KEPT_NUMBERS.has(key) ? value : null;
  if (Array.isArray(value)) return value.map((v) => hidden(v));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, hidden(v, k)]));
  return value;
}

/** The first `as_of` each item answered, so a later answer can say whether it repeats it (a cached read) or is new. */
const firstAsOf = new Map<string, string>();

async function answerOf(res: Response, item: string, started: number): Promise<Answer> {
  const text = (await res.text()).replaceAll(item, "ITEM");
  const body = text ? (JSON.parse(text) as Record<string, unknown>) : null;
  const headers = Object.fromEntries(["content-type", "cache-control", "vary", "x-stale-data", "retry-after"].map((h) => [h, res.headers.get(h)]));
  const etag = res.headers.get("etag");
  // The tag must follow from the content as shown: equal content (item aside), equal tag.
  headers.etag = etag === null ? null : etag === weakETag(JSON.parse(text.replaceAll("ITEM", item)).counts) ? "of the content" : etag;
  if (body && "took_ms" in body) body.took_ms = 0;
  if (body && typeof body.as_of === "string") {
    const first = firstAsOf.get(item);
    const at = Date.parse(body.as_of);
    if (first === undefined) firstAsOf.set(item, body.as_of);
    body.as_of = body.as_of === first ? "the first read's" : at >= started && at <= Date.now() ? "now" : body.as_of;
  }
  return { status: res.status, headers, body };
}

async function read(route: string, item: string, reader: Reader, on: Env): Promise<Answer> {
  const started = Date.now();
  return await answerOf(await READS[route]!(item, reader, on), item, started);
}

const documented = () =>
  Object.entries(committed.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));

const serviceOnly = (op: string) => {
  const [method, path] = op.split(" ") as [string, string];
  const operation = (committed.paths as Record<string, Record<string, { security?: unknown[] }>>)[path]![method.toLowerCase()]!;
  return path.startsWith("/v1/admin/") || op === "GET /metrics" ? operation.security !== undefined : false;
};

describe("the route matrix", () => {
  it("has a case, or a reason for none, for every operation of the OpenAPI document", () => {
    const missing = documented().filter((op) => !(op in READS) && !(op in NOT_ITEM_READS) && !serviceOnly(op));
    expect(missing, "add a read case to READS, or a reason to NOT_ITEM_READS").toEqual([]);
    // Service operations keep the admin views (the truth, whatever an item's settings say): they take a service token.
    for (const op of documented().filter(serviceOnly)) expect(op).toMatch(/^(GET|PUT|POST|DELETE) \/(v1\/admin\/|metrics$)/);
  });

  for (const store of ["present", "absent"] as const) {
    describe(`with the central store ${store}`, () => {
      // Long-lived memory entries and no location cache: an item's answers go from a store read to a cached one exactly once.
      const on = withVars({ READ_CACHE_MEMORY_TTL_MS: "600000", READ_CACHE_EDGE_TTL_MS: "0", ...(store === "absent" ? { ALTERNATOR_ENDPOINT: "" } : {}) });
      const [priv, followers, hide] = [freshId(), freshId(), freshId()];
      let owner: Reader, follower: Reader, stranger: Reader;
      let likers: string[];

      beforeAll(async () => {
        owner = await newUser();
        const f = await newUser();
        follower = { ...f, grant: await grantFor(f.id, [owner.id!]) };
        stranger = await newUser();
        likers = [freshId(), freshId()];
        for (const item of [priv, followers, hide]) await seed(item, likers);
        await setSettings(priv, { owner_id: owner.id, visibility: "private" });
        await setSettings(followers, { owner_id: owner.id, visibility: "followers" });
        await setSettings(hide, { owner_id: owner.id, hide_counts: true });
      });

      for (const route of Object.keys(READS)) {
        it(`${route}: a stranger and an anonymous reader get an untouched item's answer, or its hidden form`, async () => {
          // One untouched item beside each, read by the same readers in the same order, so both meet the same caches.
          const untouchedBeside = new Map([priv, followers, hide].map((item) => [item, freshId()]));
          for (const reader of [stranger, {}] as Reader[]) {
            for (const [item, kind] of [[priv, "private"], [followers, "followers, no grant"], [hide, "hidden counts"]] as const) {
              const untouched = untouchedBeside.get(item)!;
              // Twice, in step: the second answer is a cached one for both.
              for (const round of [1, 2]) {
                const seen = await read(route, item, reader, on);
                const expected = await read(route, untouched, reader, on);
                expect(seen, `${kind}, ${reader.token ? "stranger" : "anonymous"}, read ${round}`).toEqual(kind === "hidden counts" ? { ...expected, body: hidden(expected.body) } : expected);
              }
            }
          }
        });
      }

      it("shows the owner every item's truth, and a grant holder the followers item's", async () => {
        const likesOf = async (item: string, reader: Reader) => (await json(await READS["GET /v1/count"]!(item, reader, on))).counts;
        for (const item of [priv, followers, hide]) expect(await likesOf(item, owner)).toMatchObject({ likes: 2, views: 7, unique_viewers: 3 });
        expect(await likesOf(followers, follower)).toMatchObject({ likes: 2, views: 7, unique_viewers: 3 });
        const history = await json(await READS["GET /v1/history"]!(priv, owner, on));
        expect(history.days.at(-1).totals).toEqual({ likes: 2, saves: 1, views: 7, shares: 2 });
        const list = await READS["GET /v1/likers"]!(followers, follower, on);
        if (store === "present") expect((await json(list)).likers.map((l: { user_id: string }) => l.user_id).sort()).toEqual([...likers].sort());
        else expect(list.status).toBe(503);
      });
    });
  }

  it("GET /v1/live: pushes a stranger and an anonymous socket what it pushes of an untouched item (nothing), hidden counts as null", async () => {
    const owner = await newUser();
    const f = await newUser();
    const follower: Reader = { ...f, grant: await grantFor(f.id, [owner.id!]) };
    const [priv, followers, hide, untouched, open] = [freshId(), freshId(), freshId(), freshId(), freshId()];
    await setSettings(priv, { owner_id: owner.id, visibility: "private" });
    await setSettings(followers, { owner_id: owner.id, visibility: "followers" });
    await setSettings(hide, { owner_id: owner.id, hide_counts: true });
    const items = [priv, followers, hide, untouched, open].map((id) => `post:${id}`);
    const readers: Record<string, Reader> = { anonymous: {}, stranger: await newUser(), owner, follower };
    const sockets = Object.fromEntries(await Promise.all(Object.entries(readers).map(async ([name, r]) => [name, await liveSocket(r, items)] as const)));
    await deliver([priv, followers, hide, open].map((id) => countsEmission(`post:${id}`, 5)));
    const real = { likes: 5, views: 5, shares: 5, saves: 5 };
    const nulls = { likes: null, views: null, shares: null, saves: null };
    const expected: Record<string, Record<string, unknown>> = {
      anonymous: { [`post:${hide}`]: nulls, [`post:${open}`]: real },
      stranger: { [`post:${hide}`]: nulls, [`post:${open}`]: real },
      owner: { [`post:${priv}`]: real, [`post:${followers}`]: real, [`post:${hide}`]: real, [`post:${open}`]: real },
      follower: { [`post:${followers}`]: real, [`post:${hide}`]: nulls, [`post:${open}`]: real },
    };
    for (const [name, socket] of Object.entries(sockets)) {
      const pushed = await socket.countsUntil(`post:${open}`);
      expect(pushed, name).toEqual(expected[name]);
      socket.ws.close(1000);
    }
  });

  it("refuses a live socket's grant without a token, and one naming too many owners", async () => {
    const user = await newUser();
    const grant = await grantFor(user.id, [freshId()]);
    const anonymousGrant = await call("GET", "/v1/live", { headers: { upgrade: "websocket", "x-plaudit-grant": grant } });
    expect(anonymousGrant.status).toBe(401);
    const wide = await grantFor(user.id, Array.from({ length: 26 }, () => freshId()));
    const tooWide = await call("GET", "/v1/live", { token: user.token, headers: { upgrade: "websocket", "x-plaudit-grant": wide } });
    expect(tooWide.status).toBe(401);
    expect((await json(tooWide)).message).toContain("at most 25 owners");
  });
});
