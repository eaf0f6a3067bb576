import { describe, expect, it } from "vitest";
import type { LikersResponse } from "../../shared/likers";
import { call, freshId, json, like, newUser, tokenFor, unlike } from "./helpers";
import { central } from "./pipeline-helpers";
import { block, setSettings } from "./privacy-helpers";

async function likersPage(token: string, itemId: string, query = ""): Promise<LikersResponse> {
  const response = await call("GET", `/v1/likers?item_id=${itemId}&item_type=post${query}`, { token });
  expect(response.status).toBe(200);
  return await json<LikersResponse>(response);
}

/** Every page, following next_cursor, with `between` run after each page. */
async function allLikers(token: string, itemId: string, limit: number, between: () => Promise<void> = async () => {}) {
  const seen: string[] = [];
  const times: number[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const page = await likersPage(token, itemId, `&limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`);
    expect(page.likers.length).toBeLessThanOrEqual(limit);
    seen.push(...page.likers.map((l) => l.user_id));
    times.push(...page.likers.map((l) => Date.parse(l.liked_at)));
    cursor = page.next_cursor;
    if (cursor === null) break;
    await between();
  }
  return { seen, times };
}

/** Waits until the central store lists `count` likers of the item (the list lags the objects by the pipeline). */
async function listed(itemId: string, count: number) {
  const store = await central();
  await expect.poll(async () => (await store.likersPage(`post:${itemId}`, "likes", null, 100)).likers.length, { timeout: 20_000 }).toBe(count);
}

describe("who liked this", () => {
  it("pages newest first with no liker skipped or repeated while others like and unlike", async () => {
    const item = freshId();
    const users = await Promise.all(Array.from({ length: 8 }, () => newUser()));
    for (const user of users) expect((await like(user.token, item)).status).toBe(200);
    expect((await unlike(users[5]!.token, item)).status).toBe(200);
    await listed(item, 7);
    const reader = await newUser();
    const late = await Promise.all(Array.from({ length: 3 }, () => newUser()));
    let next = 0;
    const { seen, times } = await allLikers(reader.token, item, 2, async () => {
      // A like made while the client pages is newer than every cursor: it shifts nothing.
      if (next < late.length) expect((await like(late[next++]!.token, item)).status).toBe(200);
    });
    const expected = users.filter((_, i) => i !== 5).map((u) => u.id);
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual([...expected].sort());
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it("leaves out likers the owner blocks and likers on either side of a block with the viewer, and fills the page", async () => {
    const item = freshId();
    const owner = await newUser();
    expect((await setSettings(item, { owner_id: owner.id, visibility: "public" })).status).toBe(200);
    const users = await Promise.all(Array.from({ length: 6 }, () => newUser()));
    for (const user of users) expect((await like(user.token, item)).status).toBe(200);
    await listed(item, 6);
    const viewer = await newUser();
    await block(owner.id, users[1]!.id);
    await block(users[2]!.id, viewer.id);
    await block(viewer.id, users[3]!.id);

    const forViewer = await allLikers(viewer.token, item, 100);
    expect([...forViewer.seen].sort()).toEqual([users[0]!, users[4]!, users[5]!].map((u) => u.id).sort());
    const forOther = await allLikers((await newUser()).token, item, 100);
    expect([...forOther.seen].sort()).toEqual([users[0]!, users[2]!, users[3]!, users[4]!, users[5]!].map((u) => u.id).sort());
    // Filled to the limit from a further store page: the third newest liker is filtered out for this viewer.
    const first = await likersPage(viewer.token, item, "&limit=3");
    expect(first.likers.map((l) => l.user_id)).toEqual([users[5]!, users[4]!, users[0]!].map((u) => u.id));
  });

  it("answers an item the viewer may not see, or whose counts are hidden from them, as one nobody liked", async () => {
    const [secret, hidden] = [freshId(), freshId()];
    const owner = await newUser();
    const fan = await newUser();
    expect((await like(fan.token, secret)).status).toBe(200);
    expect((await like(fan.token, hidden)).status).toBe(200);
    await listed(secret, 1);
    await listed(hidden, 1);
    expect((await setSettings(secret, { owner_id: owner.id, visibility: "private" })).status).toBe(200);
    expect((await setSettings(hidden, { owner_id: owner.id, visibility: "public", hide_counts: true })).status).toBe(200);
    const stranger = await newUser();
    for (const item of [secret, hidden]) {
      expect(await likersPage(stranger.token, item)).toEqual({ likers: [], next_cursor: null });
      expect((await likersPage(owner.token, item)).likers.map((l) => l.user_id)).toEqual([fan.id]);
    }
  });

  it("refuses a bad limit or cursor and a caller without a token", async () => {
    const token = await tokenFor(freshId());
    for (const query of ["&limit=0", "&limit=101", "&cursor=nope", "&cursor=MTIz"]) {
      const response = await call("GET", `/v1/likers?item_id=1&item_type=post${query}`, { token });
      expect([query, response.status]).toEqual([query, 400]);
    }
    expect((await call("GET", "/v1/likers?item_id=x&item_type=post", { token })).status).toBe(400);
    expect((await call("GET", "/v1/likers?item_id=1&item_type=post")).status).toBe(401);
  });
});
