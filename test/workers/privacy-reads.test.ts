import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { zeroCounts } from "../../shared/counters";
import { countDatabaseFor } from "../../workers/stores/count-databases";
import { MAX_ROUND_TRIPS, writeSnapshots } from "../../workers/stores/item-counts";
import { central } from "./pipeline-helpers";
import { call, freshId, json, like, newUser, tokenFor } from "./helpers";
import { scrape, total } from "./metrics-exposition";
import { grantFor, setSettings } from "./privacy-helpers";

const ZERO = { likes: 0, views: 0, shares: 0, saves: 0 };
const HIDDEN = { likes: null, views: null, shares: null, saves: null };

async function countAs(item: string, token?: string, grant?: string) {
  const headers = grant ? { "x-plaudit-grant": grant } : undefined;
  const res = await call("GET", `/v1/count?item_id=${item}&item_type=post`, { ...(token ? { token } : {}), ...(headers ? { headers } : {}) });
  expect(res.status).toBe(200);
  return (await json(res)).counts;
}

async function feedAs(items: string[], token?: string, extra: Record<string, unknown> = {}) {
  const res = await call("POST", "/v1/counts", { ...(token ? { token } : {}), body: { items: items.map((item_id) => ({ item_id, item_type: "post" })), ...extra } });
  expect(res.status).toBe(200);
  return (await json(res)).counts as Record<string, unknown>;
}

/** Reads until `read` returns what `expected` is, within a bound: the regional store may lag the objects. */
async function eventually<T>(read: () => Promise<T>, expected: T, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = await read();
  while (JSON.stringify(last) !== JSON.stringify(expected) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    last = await read();
  }
  expect(last).toEqual(expected);
}

describe("reads check each item for the viewer", () => {
  it("answers a private item in a feed of 50 as untouched to another user, and the other 49 exactly", async () => {
    const owner = await newUser();
    const stranger = await newUser();
    const items = Array.from({ length: 50 }, () => freshId());
    const likesOf = (i: number) => (i % 3) + 1;
    // Three likers per ten items, so no user comes near the per-user rate limit.
    const likers = await Promise.all(Array.from({ length: 15 }, () => newUser()));
    await Promise.all(
      items.flatMap((item, i) =>
        Array.from({ length: likesOf(i) }, (_, j) => like(likers[Math.floor(i / 10) * 3 + j]!.token, item).then((r) => expect(r.status).toBe(200))),
      ),
    );
    const secret = items[17]!;
    await setSettings(secret, { owner_id: owner.id, visibility: "private" });
    const expected = Object.fromEntries(items.map((item, i) => [`post:${item}`, item === secret ? ZERO : { ...ZERO, likes: likesOf(i) }]));
    await eventually(() => feedAs(items, stranger.token), expected);
    expect((await feedAs(items))[`post:${secret}`]).toEqual(ZERO);
    expect((await feedAs(items, owner.token))[`post:${secret}`]).toEqual({ ...ZERO, likes: likesOf(17) });
    expect(await countAs(secret, stranger.token)).toEqual(ZERO);
    expect(await countAs(secret, owner.token)).toEqual({ ...ZERO, likes: likesOf(17) });
  });

  it("reads a feed's settings in the same request as its counts: one query per database, or one central read past two databases", async () => {
    const owner = await newUser();
    const items = Array.from({ length: 20 }, () => freshId());
    const secret = items[3]!;
    const db = countDatabaseFor(env, `post:${secret}`);
    await writeSnapshots(env, db, new Map([[`post:${secret}`, { seq: 1, counts: { ...zeroCounts(), likes: 3 } }]]), { items: [] }, Date.now(), "seed");
    // Written straight into the item's database, as another isolate would have: this isolate has not seen it.
    await db
      .prepare("INSERT INTO item_settings (item_type, item_id, owner_id, visibility, hide_counts, updated_at) VALUES ('post', ?1, ?2, 'private', 0, ?3)")
      .bind(secret, owner.id, Date.now())
      .run();
    // And on its central row, as the aggregator and the settings route write it there.
    const store = await central();
    await store.writeSnapshot(`post:${secret}`, { seq: 1, counts: { ...zeroCounts(), likes: 3 } });
    await store.writeSettings(`post:${secret}`, { owner: owner.id, visibility: "private", hideCounts: false }, Date.now());
    const service = await tokenFor(freshId(), { role: "service" });
    const costs = async () => {
      const families = await scrape(service);
      const sum = (name: string, store?: string) => total(families, name, (labels) => labels.caller === "/v1/counts" && (store === undefined || labels.store === store));
      return [sum("plaudit_d1_queries_total"), sum("plaudit_store_round_trips_total", "central")];
    };
    const before = await costs();
    const stranger = await newUser();
    const read = await feedAs(items, stranger.token);
    expect(read[`post:${secret}`]).toEqual(ZERO);
    const databases = new Set(items.map((item) => countDatabaseFor(env, `post:${item}`))).size;
    const after = await costs();
    expect(after.map((n, i) => n - before[i]!)).toEqual(databases <= MAX_ROUND_TRIPS ? [databases, 0] : [0, 1]);
    expect((await feedAs([secret], owner.token))[`post:${secret}`]).toEqual({ ...ZERO, likes: 3 });
  });

  it("shows a followers item only to its owner and to a viewer whose grant names the owner", async () => {
    const owner = await newUser();
    const follower = await newUser();
    const other = await newUser();
    const item = freshId();
    await like(owner.token, item);
    await setSettings(item, { owner_id: owner.id, visibility: "followers" });
    const liked = { ...ZERO, likes: 1 };
    await eventually(() => countAs(item, owner.token), liked);
    expect(await countAs(item, follower.token, await grantFor(follower.id, [owner.id]))).toEqual(liked);
    expect(await countAs(item, follower.token)).toEqual(ZERO);
    expect(await countAs(item, other.token, await grantFor(other.id, [freshId()]))).toEqual(ZERO);
    expect(await countAs(item)).toEqual(ZERO);
    const grant = await grantFor(follower.id, [owner.id]);
    const feed = await call("POST", "/v1/counts", {
      token: follower.token,
      headers: { "x-plaudit-grant": grant },
      body: { items: [{ item_id: item, item_type: "post" }] },
    });
    expect((await json(feed)).counts[`post:${item}`]).toEqual(liked);
  });

  it("reads hidden counts as null for everyone but the owner, with or without a counter filter", async () => {
    const owner = await newUser();
    const other = await newUser();
    const [hidden, open] = [freshId(), freshId()];
    await like(other.token, hidden);
    await like(other.token, open);
    await setSettings(hidden, { owner_id: owner.id, hide_counts: true });
    await eventually(() => countAs(hidden, owner.token), { ...ZERO, likes: 1 });
    expect(await countAs(hidden, other.token)).toEqual(HIDDEN);
    expect(await countAs(hidden)).toEqual(HIDDEN);
    const feed = await feedAs([hidden, open], other.token, { counter_types: ["likes"] });
    expect(feed).toEqual({ [`post:${hidden}`]: { likes: null }, [`post:${open}`]: { likes: 1 } });
  });

  it("answers a public read with a bad token 401 rather than as anonymous", async () => {
    const res = await call("GET", `/v1/count?item_id=${freshId()}&item_type=post`, { token: "not-a-token" });
    expect(res.status).toBe(401);
    expect((await json(res)).error).toBe("unauthorized");
  });
});
