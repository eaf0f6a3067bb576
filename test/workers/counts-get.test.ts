import { describe, expect, it } from "vitest";
import { call, freshId, json, like, newUser } from "./helpers";
import { settled } from "./pipeline-helpers";
import { grantFor, setSettings } from "./privacy-helpers";

const getCounts = (query: string, options: { token?: string; headers?: Record<string, string> } = {}) =>
  call("GET", `/v1/counts?${query}`, options);

/** A shared cache may store an answer only when Cache-Control is public and does not forbid it. */
const sharedCacheMayStore = (response: Response) => {
  const control = response.headers.get("cache-control") ?? "";
  return /\bpublic\b/.test(control) && !/\b(private|no-store)\b/.test(control);
};

describe("GET /v1/counts", () => {
  it("answers the same counts as POST /v1/counts", async () => {
    const [liked, untouched] = [freshId(), freshId()];
    for (let i = 0; i < 2; i++) expect((await like((await newUser()).token, liked)).status).toBe(200);
    await settled(`post:${liked}`);

    const items = [
      { item_id: liked, item_type: "post" },
      { item_id: untouched, item_type: "reel" },
    ];
    for (const types of [undefined, ["likes", "views"]]) {
      const posted = await json(await call("POST", "/v1/counts", { body: { items, ...(types ? { counter_types: types } : {}) } }));
      const query = `items=post:${liked},reel:${untouched}${types ? `&counter_types=${types.join(",")}` : ""}`;
      const got = await getCounts(query);
      expect(got.status).toBe(200);
      expect((await json(got)).counts).toEqual(posted.counts);
    }
    expect((await json(await getCounts(`items=post:${liked}`))).counts[`post:${liked}`].likes).toBe(2);
  });

  it("answers 304 to a matching If-None-Match, and a new tag once the counts change", async () => {
    const item = freshId();
    const first = await getCounts(`items=post:${item}`);
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^W\/".+"$/);

    for (const tag of [etag, etag.slice(2), `"other", ${etag}`, "*"]) {
      const again = await getCounts(`items=post:${item}`, { headers: { "if-none-match": tag } });
      expect(again.status).toBe(304);
      expect(again.headers.get("etag")).toBe(etag);
      expect(await again.text()).toBe("");
    }
    expect((await getCounts(`items=post:${item}`, { headers: { "if-none-match": 'W/"other"' } })).status).toBe(200);

    expect((await like((await newUser()).token, item)).status).toBe(200);
    await settled(`post:${item}`);
    await expect.poll(async () => (await getCounts(`items=post:${item}`)).headers.get("etag"), { timeout: 10_000 }).not.toBe(etag);
    expect((await getCounts(`items=post:${item}`, { headers: { "if-none-match": etag } })).status).toBe(200);
  });

  it("lets shared caches keep only the answers that are the same for everyone", async () => {
    const [owner, follower, stranger] = [await newUser(), await newUser(), await newUser()];
    const [hidden, followersOnly, open] = [freshId(), freshId(), freshId()];
    expect((await setSettings(hidden, { owner_id: owner.id, hide_counts: true })).status).toBe(200);
    expect((await setSettings(followersOnly, { owner_id: owner.id, visibility: "followers" })).status).toBe(200);
    for (const id of [hidden, followersOnly, open]) expect((await like(owner.token, id)).status).toBe(200);
    for (const id of [hidden, followersOnly, open]) await settled(`post:${id}`);
    const query = `items=post:${hidden},post:${followersOnly},post:${open}`;

    const anonymous = await getCounts(query);
    expect(anonymous.headers.get("cache-control")).toBe("public, max-age=2, s-maxage=2");
    expect(anonymous.headers.get("vary")).toMatch(/authorization/i);
    const everyone = (await json(anonymous)).counts;
    expect(everyone[`post:${hidden}`].likes).toBeNull();
    expect(everyone[`post:${followersOnly}`].likes).toBe(0);

    const viewers = [
      { token: owner.token },
      { token: follower.token, headers: { "x-plaudit-grant": await grantFor(follower.id, [owner.id]) } },
      { token: stranger.token },
    ];
    const answers = await Promise.all(viewers.map((viewer) => getCounts(query, viewer)));
    // The owner and the follower see more than everyone does: their answers depend on who asks.
    const bodies = await Promise.all(answers.map((answer) => json(answer)));
    expect(bodies[0].counts[`post:${hidden}`].likes).toBe(1);
    expect(bodies[1].counts[`post:${followersOnly}`].likes).toBe(1);
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.headers.get("cache-control")).toBe("private, no-cache");
      expect(sharedCacheMayStore(answer)).toBe(false);
    }
    expect(sharedCacheMayStore(anonymous)).toBe(true);
  });

  it("refuses a bad item list with 400 and the failing entry's path", async () => {
    const many = Array.from({ length: 101 }, (_, i) => `post:${i}`).join(",");
    for (const [query, path] of [
      ["", "items"],
      ["items=", "items.0.item_id"],
      ["items=post:1,post:007", "items.1.item_id"],
      ["items=video:1", "items.0.item_type"],
      [`items=${many}`, "items"],
      ["items=post:1&counter_types=likes,claps", "counter_types.1"],
    ] as const) {
      const response = await getCounts(query);
      expect(response.status).toBe(400);
      const body = await json(response);
      expect(body.error).toBe("invalid_request");
      expect(body.details.map((d: { path: string }) => d.path)).toContain(path);
    }
  });
});
