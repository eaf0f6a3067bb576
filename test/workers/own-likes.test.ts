import { describe, expect, it } from "vitest";
import { call, freshId, json, like, newUser, unlike } from "./helpers";

type Page = { likes: { item_id: string; item_type: string; liked_at: string | null }[]; next_cursor: string | null };

const page = async (token: string, query: string): Promise<Page> => {
  const response = await call("GET", `/v1/me/likes?${query}`, { token });
  expect(response.status).toBe(200);
  return await json<Page>(response);
};

/** Newest first; likes made in the same millisecond follow their item key, descending. */
const newestFirst = (likes: Page["likes"]) =>
  [...likes].sort((a, b) => (b.liked_at ?? "").localeCompare(a.liked_at ?? "") || `${b.item_type}:${b.item_id}`.localeCompare(`${a.item_type}:${a.item_id}`));

describe("GET /v1/me/likes", () => {
  it("lists the caller's current likes newest first, with their time, by type when asked", async () => {
    const user = await newUser();
    const [first, second, reel, gone] = [freshId(), freshId(), freshId(), freshId()];
    const before = new Date().toISOString();
    for (const [id, type] of [[first, "post"], [second, "post"], [reel, "reel"], [gone, "post"]] as const) {
      expect((await like(user.token, id, type)).status).toBe(200);
    }
    expect((await unlike(user.token, gone)).status).toBe(200);

    const all = await page(user.token, "");
    expect(all.next_cursor).toBeNull();
    expect(all.likes.map((l) => `${l.item_type}:${l.item_id}`).sort()).toEqual([`post:${first}`, `post:${second}`, `reel:${reel}`].sort());
    expect(all.likes).toEqual(newestFirst(all.likes));
    for (const l of all.likes) expect(l.liked_at! >= before).toBe(true);

    const posts = await page(user.token, "item_type=post");
    expect(posts.likes.map((l) => l.item_id).sort()).toEqual([first, second].sort());
    expect((await page((await newUser()).token, "")).likes).toEqual([]);
  });

  it("pages through every like once, none skipped or repeated, while the user keeps liking", async () => {
    const user = await newUser();
    const ids = Array.from({ length: 17 }, () => freshId());
    for (const id of ids) expect((await like(user.token, id)).status).toBe(200);
    const expected = (await page(user.token, "limit=100")).likes;
    expect(expected).toHaveLength(17);

    const seen: Page["likes"] = [];
    let cursor: string | null = null;
    do {
      const next: Page = await page(user.token, `limit=5${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...next.likes);
      // A like between two pages: newer than the cursor, so it belongs before the first page, never in a later one.
      expect((await like(user.token, freshId())).status).toBe(200);
      cursor = next.next_cursor;
    } while (cursor !== null);
    expect(seen).toEqual(expected);
  });

  it("refuses a bad cursor or limit with 400, and a missing token with 401", async () => {
    const user = await newUser();
    for (const query of ["cursor=nonsense!", `cursor=${btoa("12.not-an-item")}`, "limit=0", "limit=101", "limit=abc", "item_type=video"]) {
      const response = await call("GET", `/v1/me/likes?${query}`, { token: user.token });
      expect(response.status).toBe(400);
      expect((await json(response)).error).toBe("invalid_request");
    }
    expect((await call("GET", "/v1/me/likes")).status).toBe(401);
  });
});
