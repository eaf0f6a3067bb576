import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { countDatabases } from "../../workers/stores/count-databases";
import { keepIntent } from "../../workers/likes/intents";
import { call, freshId, json, like, newUser } from "./helpers";
import { withVars } from "./idp";
import { central, d1Counts, deliver, settled } from "./pipeline-helpers";
import { countsEmission, hasLiked, liveSocket, seed, service, setSettings } from "./privacy-helpers";

const ZERO = { likes: 0, views: 0, shares: 0, saves: 0 };
const NULLS = { likes: null, views: null, shares: null, saves: null };

/** Waits until the pipeline has written the item's likes to its count database. */
const inD1 = (item: string, likes: number) =>
  vi.waitFor(async () => expect((await d1Counts(`post:${item}`))?.counts.likes).toBe(likes), { timeout: 20_000, interval: 100 });

const history = async (item: string, token?: string, on?: Env) =>
  await call("GET", `/v1/history?item_id=${item}&item_type=post&days=3`, { ...(token ? { token } : {}), ...(on ? { env: on } : {}) });

/** The answer as it would be for any item: the item's own id taken out. */
const bodyOf = async (res: Response, item: string) => JSON.parse((await res.text()).replaceAll(item, "ITEM"));

describe("the five ways an invisible item was told apart", () => {
  it("1. history: a private item reads as an untouched one, a hidden one as null, and the owner sees the numbers", async () => {
    const owner = await newUser();
    const stranger = await newUser();
    const [secret, hidden, untouched] = [freshId(), freshId(), freshId()];
    for (const item of [secret, hidden]) expect((await like(stranger.token, item)).status).toBe(200);
    await Promise.all([inD1(secret, 1), inD1(hidden, 1)]);
    await setSettings(secret, { owner_id: owner.id, visibility: "private" });
    await setSettings(hidden, { owner_id: owner.id, hide_counts: true });
    const blank = await bodyOf(await history(untouched), untouched);
    for (const token of [stranger.token, undefined]) {
      expect(await bodyOf(await history(secret, token), secret)).toEqual(blank);
      const shown = await json(await history(hidden, token));
      expect(shown.days.at(-1)).toEqual({ date: blank.days.at(-1).date, ...NULLS, totals: NULLS });
    }
    expect((await json(await history(secret, owner.token))).days.at(-1).totals.likes).toBe(1);
    expect((await json(await history(hidden, owner.token))).days.at(-1).likes).toBe(1);
  });

  it("2. live: an anonymous socket gets nothing of a private item its owner likes, and nulls for a hidden one", async () => {
    const owner = await newUser();
    const [secret, hidden, open] = [freshId(), freshId(), freshId()];
    await setSettings(secret, { owner_id: owner.id, visibility: "private" });
    await setSettings(hidden, { owner_id: owner.id, hide_counts: true });
    const socket = await liveSocket({}, [`post:${secret}`, `post:${hidden}`, `post:${open}`]);
    for (const item of [secret, hidden]) expect((await like(owner.token, item)).status).toBe(200);
    expect((await call("POST", "/v1/view", { token: owner.token, body: { item_id: secret, item_type: "post" } })).status).toBe(200);
    // Each item's object acknowledges its emission only after the aggregator published it to the hubs.
    await settled(`post:${secret}`);
    await settled(`post:${hidden}`);
    await deliver([countsEmission(`post:${open}`, 1)]);
    const pushed = await socket.countsUntil(`post:${open}`);
    expect(pushed).not.toHaveProperty([`post:${secret}`]);
    expect(pushed[`post:${hidden}`]).toEqual(NULLS);
    socket.ws.close(1000);
  });

  it("3. unique viewers: an invisible item answers 0 where an untouched one does, on all three reads", async () => {
    const owner = await newUser();
    const [secret, untouched] = [freshId(), freshId()];
    await seed(secret, [freshId()]);
    await setSettings(secret, { owner_id: owner.id, visibility: "private" });
    for (const item of [secret, untouched]) {
      const one = await json(await call("GET", `/v1/count?item_id=${item}&item_type=post&unique_viewers=true`));
      expect(one.counts).toEqual({ ...ZERO, unique_viewers: 0 });
      const posted = await json(await call("POST", "/v1/counts", { body: { items: [{ item_id: item, item_type: "post" }], unique_viewers: true } }));
      expect(posted.counts[`post:${item}`]).toEqual({ ...ZERO, unique_viewers: 0 });
      const got = await json(await call("GET", `/v1/counts?items=post:${item}&unique_viewers=true`));
      expect(got.counts[`post:${item}`]).toEqual({ ...ZERO, unique_viewers: 0 });
    }
    const truth = await json(await call("GET", `/v1/count?item_id=${secret}&item_type=post&unique_viewers=true`, { token: owner.token }));
    expect(truth.counts.unique_viewers).toBe(3);
  });

  it("4. as_of and cached: an invisible item's second read repeats the first's as_of, cached, as an untouched item's does", async () => {
    const owner = await newUser();
    const [secret, untouched] = [freshId(), freshId()];
    await seed(secret, [freshId()]);
    await setSettings(secret, { owner_id: owner.id, visibility: "private" });
    // A memory tier that outlives the two reads, so the second is a cached one however slow the machine.
    const on = withVars({ READ_CACHE_MEMORY_TTL_MS: "600000" });
    for (const item of [secret, untouched]) {
      const started = Date.now();
      const first = await json(await call("GET", `/v1/count?item_id=${item}&item_type=post`, { env: on }));
      expect(first.cached).toBe(false);
      expect(Date.parse(first.as_of)).toBeGreaterThanOrEqual(started);
      const second = await json(await call("GET", `/v1/count?item_id=${item}&item_type=post`, { env: on }));
      expect([second.cached, second.as_of]).toEqual([true, first.as_of]);
    }
  });

  it("4. as_of and cached, after the owner's like left the item in this isolate's cache: still an untouched item's", async () => {
    const owner = await newUser();
    const stranger = await newUser();
    const [secret, untouched] = [freshId(), freshId()];
    await setSettings(secret, { owner_id: owner.id, visibility: "private" });
    const on = withVars({ READ_CACHE_MEMORY_TTL_MS: "600000" });
    expect((await call("POST", "/v1/like", { token: owner.token, body: { item_id: secret, item_type: "post" }, env: on })).status).toBe(200);
    const answers: Record<string, unknown[]> = {};
    for (const item of [secret, untouched]) {
      const started = Date.now();
      const first = await json(await call("GET", `/v1/count?item_id=${item}&item_type=post`, { token: stranger.token, env: on }));
      const second = await json(await call("GET", `/v1/count?item_id=${item}&item_type=post`, { token: stranger.token, env: on }));
      expect(Date.parse(first.as_of)).toBeGreaterThanOrEqual(started);
      answers[item] = [first.counts, first.cached, second.counts, second.cached, second.as_of === first.as_of];
    }
    expect(answers[secret]).toEqual(answers[untouched]);
    expect(answers[untouched]).toEqual([ZERO, false, ZERO, true, true]);
  });

  it("5. likers without a central store: an invisible item answers 503 unavailable, as an untouched one", async () => {
    const owner = await newUser();
    const reader = await newUser();
    const [secret, untouched] = [freshId(), freshId()];
    await setSettings(secret, { owner_id: owner.id, visibility: "private" });
    const noStore = withVars({ ALTERNATOR_ENDPOINT: "" });
    for (const item of [secret, untouched]) {
      const res = await call("GET", `/v1/likers?item_id=${item}&item_type=post`, { token: reader.token, env: noStore });
      expect(res.status).toBe(503);
      expect(await json(res)).toMatchObject({ error: "unavailable", retry_after: 5 });
    }
  });
});

describe("a live subscriber whose item changes its settings", () => {
  it("gets no counts once a public item turns private, and gets them again once it turns public", async () => {
    const [item, beat] = [`post:${freshId()}`, `post:${freshId()}`];
    const socket = await liveSocket({}, [item, beat]);
    let seq = 0;
    const round = async () => {
      seq++;
      await deliver([countsEmission(item, seq), countsEmission(beat, seq)]);
      return await socket.countsUntil(beat);
    };
    expect((await round())[item]).toEqual({ likes: 1, views: 1, shares: 1, saves: 1 });
    const [, id] = item.split(":");
    await setSettings(id!, { owner_id: freshId(), visibility: "private" });
    // Within the privacy cache's lifetime (here at once: this isolate wrote the settings) the pushes stop.
    await vi.waitFor(async () => expect(await round()).not.toHaveProperty([item]), { timeout: 30_000, interval: 100 });
    expect(await round()).toEqual({ [beat]: { likes: seq, views: seq, shares: seq, saves: seq } });
    await setSettings(id!, { owner_id: null, visibility: "public" });
    await vi.waitFor(async () => expect((await round())[item]).toEqual({ likes: seq, views: seq, shares: seq, saves: seq }), { timeout: 30_000, interval: 100 });
    socket.ws.close(1000);
  });
});

describe("a like out of sight", () => {
  it("is left out of /v1/me/likes exactly when has_liked answers false, and comes back with the item", async () => {
    const liker = await newUser();
    const [kept, lost] = [freshId(), freshId()];
    for (const item of [kept, lost]) expect((await like(liker.token, item)).status).toBe(200);
    const mine = async () => (await json(await call("GET", "/v1/me/likes?limit=1", { token: liker.token }))) as { likes: { item_id: string }[]; next_cursor: string | null };
    expect((await mine()).likes.map((l) => l.item_id)).toEqual([lost]);
    await setSettings(lost, { owner_id: freshId(), visibility: "private" });
    expect(await hasLiked(liker.token, lost)).toBe(false);
    // The newest like is out of sight: the page is filled from the next one, and no further page is promised.
    expect(await mine()).toEqual({ likes: [{ item_id: kept, item_type: "post", liked_at: expect.any(String) }], next_cursor: null });
    await setSettings(lost, { owner_id: null, visibility: "public" });
    expect(await hasLiked(liker.token, lost)).toBe(true);
    expect((await mine()).likes.map((l) => l.item_id)).toEqual([lost]);
  });
});

describe("deleting an account", () => {
  it("leaves nothing naming the user: no pending intent, no owned item; its private item stays out of everyone's sight", async () => {
    const owner = await newUser();
    const stranger = await newUser();
    const [secret, hidden] = [freshId(), freshId()];
    expect((await like(stranger.token, secret)).status).toBe(200);
    await setSettings(secret, { owner_id: owner.id, visibility: "private" });
    await setSettings(hidden, { owner_id: owner.id, hide_counts: true });
    await keepIntent(env, { user: owner.id, item: `post:${freshId()}`, counter: "likes", on: true, askedAt: Date.now() });
    await inD1(secret, 1);

    expect((await call("DELETE", `/v1/admin/users/${owner.id}`, { token: await service() })).status).toBe(200);
    await vi.waitFor(
      async () => expect((await json(await call("GET", `/v1/admin/users/${owner.id}/removal`, { token: await service() }))).phase).toBe("done"),
      { timeout: 60_000, interval: 200 },
    );

    const intents = await env.DB.prepare("SELECT count(*) AS n FROM pending_intents WHERE user_id = ?").bind(owner.id).first<{ n: number }>();
    expect(intents!.n).toBe(0);
    for (const db of countDatabases(env)) {
      expect((await db.prepare("SELECT count(*) AS n FROM item_settings WHERE owner_id = ?").bind(owner.id).first<{ n: number }>())!.n).toBe(0);
    }
    const settings = await json(await call("GET", `/v1/admin/items/post/${secret}/settings`, { token: await service() }));
    expect(settings).toMatchObject({ owner_id: null, visibility: "private" });
    // The central store's copy too: a feed over many databases reads settings there.
    const { rows } = await (await central()).readFeed([`post:${secret}`, `post:${hidden}`]);
    expect(rows.get(`post:${secret}`)?.settings).toEqual({ owner: null, visibility: "private", hideCounts: false });
    expect(rows.get(`post:${hidden}`)?.settings).toEqual({ owner: null, visibility: "public", hideCounts: true });
    for (const token of [owner.token, stranger.token, undefined]) {
      const read = async (item: string) => (await json(await call("GET", `/v1/count?item_id=${item}&item_type=post`, token ? { token } : {}))).counts;
      expect(await read(secret)).toEqual(ZERO);
      expect(await read(hidden)).toEqual(NULLS);
    }
  });
});
