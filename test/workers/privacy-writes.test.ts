import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, freshId, json, like, newUser, tokenFor, unlike } from "./helpers";
import { block, grantFor, hasLiked, service, setSettings, unblock } from "./privacy-helpers";

describe("item settings told by the host app", () => {
  it("answers an item never described as public with no owner", async () => {
    const item = freshId();
    const res = await call("GET", `/v1/admin/items/post/${item}/settings`, { token: await service() });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({
      item_id: item,
      item_type: "post",
      owner_id: null,
      visibility: "public",
      hide_counts: false,
      updated_at: null,
    });
  });

  it("stores what a PUT says and reads it back, fields left out taking their defaults", async () => {
    const item = freshId();
    const owner = freshId();
    const put = await setSettings(item, { owner_id: owner, visibility: "followers" });
    expect(put.status).toBe(200);
    const got = await json(await call("GET", `/v1/admin/items/post/${item}/settings`, { token: await service() }));
    expect(got).toMatchObject({ owner_id: owner, visibility: "followers", hide_counts: false });
    expect(Date.parse(got.updated_at)).toBeGreaterThan(0);
  });

  it("refuses a private item or hidden counts without an owner, an unknown visibility, and a user token", async () => {
    const item = freshId();
    for (const body of [{ visibility: "private" }, { hide_counts: true }, { owner_id: "1", visibility: "friends" }]) {
      const res = await setSettings(item, body);
      expect(res.status).toBe(400);
      expect((await json(res)).error).toBe("invalid_request");
    }
    const user = await newUser();
    const res = await call("PUT", `/v1/admin/items/post/${item}/settings`, { token: user.token, body: {} });
    expect(res.status).toBe(403);
  });
});

describe("likes check the item for the user", () => {
  it("refuses a like of a private item with 404, and lets its owner like it", async () => {
    const owner = await newUser();
    const other = await newUser();
    const item = freshId();
    await setSettings(item, { owner_id: owner.id, visibility: "private" });
    const refused = await like(other.token, item);
    expect(refused.status).toBe(404);
    expect(await json(refused)).toEqual({ error: "not_found", message: "No such item." });
    expect(await json(await like(owner.token, item))).toMatchObject({ status: "liked", count: 1 });
  });

  it("lets only a viewer whose grant names the owner like a followers item", async () => {
    const owner = await newUser();
    const follower = await newUser();
    const item = freshId();
    await setSettings(item, { owner_id: owner.id, visibility: "followers" });
    expect((await like(follower.token, item)).status).toBe(404);
    const otherOwner = await grantFor(follower.id, [freshId()]);
    expect((await like(follower.token, item, "post", otherOwner)).status).toBe(404);
    const granted = await like(follower.token, item, "post", await grantFor(follower.id, [owner.id]));
    expect(granted.status).toBe(200);
    expect(await json(granted)).toMatchObject({ status: "liked", count: 1, user_liked: true });
  });

  it("refuses a grant of another user, one that lives too long, a malformed one, and one without a bearer token", async () => {
    const viewer = await newUser();
    const item = freshId();
    const cases = [
      { token: viewer.token, grant: await grantFor(freshId(), [freshId()]) },
      { token: viewer.token, grant: await grantFor(viewer.id, [freshId()], 7200) },
      { token: viewer.token, grant: await tokenFor(viewer.id, { claims: { followers_of: "1,2" } }) },
      { token: viewer.token, grant: "not-a-jwt" },
      { token: undefined, grant: await grantFor(viewer.id, [freshId()]) },
    ];
    for (const { token, grant } of cases) {
      const res = await call("POST", "/v1/like", { token, body: { item_id: item, item_type: "post" }, headers: { "x-plaudit-grant": grant } });
      expect(res.status).toBe(401);
      expect((await json(res)).error).toBe("unauthorized");
    }
  });

  it("answers a like of an item with hidden counts with a null count, except to the owner", async () => {
    const owner = await newUser();
    const other = await newUser();
    const item = freshId();
    await setSettings(item, { owner_id: owner.id, hide_counts: true });
    expect(await json(await like(other.token, item))).toEqual({ status: "liked", count: null, count_formatted: null, user_liked: true });
    expect(await json(await like(owner.token, item))).toEqual({ status: "liked", count: 2, count_formatted: "2", user_liked: true });
    const save = await call("POST", "/v1/save", { token: other.token, body: { item_id: item, item_type: "post" } });
    expect(await json(save)).toEqual({ status: "saved", count: null, count_formatted: null, user_saved: true });
  });

  it("refuses a view of a private item, and answers a view of a hidden item with a null count", async () => {
    const owner = await newUser();
    const other = await newUser();
    const [closed, hidden] = [freshId(), freshId()];
    await setSettings(closed, { owner_id: owner.id, visibility: "private" });
    await setSettings(hidden, { owner_id: owner.id, hide_counts: true });
    const view = (token: string, item_id: string) => call("POST", "/v1/view", { token, body: { item_id, item_type: "post" } });
    expect((await view(other.token, closed)).status).toBe(404);
    expect(await json(await view(other.token, hidden))).toEqual({ status: "counted", count: null, count_formatted: null });
    expect(await json(await view(owner.token, hidden))).toEqual({ status: "counted", count: 2, count_formatted: "2" });
  });

  it("lets a user take back a like of an item that turned private, answered as an untouched item", async () => {
    const owner = await newUser();
    const liker = await newUser();
    const item = freshId();
    await setSettings(item, { owner_id: owner.id });
    await like(liker.token, item);
    await setSettings(item, { owner_id: owner.id, visibility: "private" });
    expect(await hasLiked(liker.token, item)).toBe(false);
    expect(await hasLiked(owner.token, item)).toBe(false);
    expect((await like(liker.token, item)).status).toBe(404);
    expect(await json(await unlike(liker.token, item))).toEqual({ status: "unliked", count: 0, count_formatted: "0", user_liked: false });
  });

  it("keeps a like accepted before another isolate's change reached this one, and refuses new ones once it has", async () => {
    const owner = await newUser();
    const [early, late] = [await newUser(), await newUser()];
    const item = freshId();
    await setSettings(item, { owner_id: owner.id });
    // The change as another isolate makes it: in D1, not in this isolate's cache.
    await env.DB.prepare("UPDATE item_settings SET visibility = 'private' WHERE item_type = 'post' AND item_id = ?1").bind(item).run();
    expect(await json(await like(early.token, item))).toMatchObject({ status: "liked", count: 1 });
    const deadline = Date.now() + 2 * Number(env.PRIVACY_CACHE_TTL_MS ?? 5000) + 5000;
    let status = (await like(late.token, item)).status;
    while (status === 200 && Date.now() < deadline) {
      await unlike(late.token, item);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      status = (await like(late.token, item)).status;
    }
    expect(status).toBe(404);
    expect(await hasLiked(early.token, item)).toBe(false);
    expect(await json(await like(owner.token, item))).toMatchObject({ status: "liked", count: 2 });
  });

  it("answers has_liked true for an item the viewer may see, false for one they may not", async () => {
    const owner = await newUser();
    const liker = await newUser();
    const [open, closed] = [freshId(), freshId()];
    await setSettings(closed, { owner_id: owner.id, visibility: "followers" });
    const grant = await grantFor(liker.id, [owner.id]);
    await like(liker.token, open);
    await like(liker.token, closed, "post", grant);
    expect(await hasLiked(liker.token, open)).toBe(true);
    expect(await hasLiked(liker.token, closed, grant)).toBe(true);
    expect(await hasLiked(liker.token, closed)).toBe(false);
  });
});

/** Two users, each owning an item. */
async function twoOwners() {
  const [a, b] = [await newUser(), await newUser()];
  const [aItem, bItem] = [freshId(), freshId()];
  await setSettings(aItem, { owner_id: a.id });
  await setSettings(bItem, { owner_id: b.id });
  return { a, b, aItem, bItem };
}

describe("blocks", () => {
  it("refuses the blocked user's likes of the blocker's items, not the blocker's of theirs, until lifted", async () => {
    const { a, b, aItem, bItem } = await twoOwners();
    const put = await block(a.id, b.id);
    expect(put).toMatchObject({ blocker_id: a.id, blocked_id: b.id, blocking: true });
    const refused = await like(b.token, aItem);
    expect(refused.status).toBe(404);
    expect(await json(refused)).toEqual({ error: "not_found", message: "No such item." });
    expect((await like(a.token, bItem)).status).toBe(200);
    await unblock(a.id, b.id);
    expect((await like(b.token, aItem)).status).toBe(200);
  });

  it("works in both directions when both block", async () => {
    const { a, b, aItem, bItem } = await twoOwners();
    await block(a.id, b.id);
    await block(b.id, a.id);
    expect((await like(b.token, aItem)).status).toBe(404);
    expect((await like(a.token, bItem)).status).toBe(404);
  });

  it("keeps a like made before the block counted; the blocked user may still take it back but not give it again", async () => {
    const a = await newUser();
    const b = await newUser();
    const item = freshId();
    await setSettings(item, { owner_id: a.id });
    expect(await json(await like(b.token, item))).toMatchObject({ status: "liked", count: 1 });
    await block(a.id, b.id);
    expect(await hasLiked(b.token, item)).toBe(true);
    expect(await json(await like(a.token, item))).toMatchObject({ status: "liked", count: 2 });
    expect(await json(await unlike(b.token, item))).toMatchObject({ status: "unliked", count: 1 });
    expect((await like(b.token, item)).status).toBe(404);
  });

  it("reads a block back, records it once, and refuses blocking oneself or a user token", async () => {
    const [a, b] = [freshId(), freshId()];
    const token = await service();
    const path = `/v1/admin/users/${a}/blocks/${b}`;
    expect(await json(await call("GET", path, { token }))).toEqual({ blocker_id: a, blocked_id: b, blocking: false, since: null });
    const first = await block(a, b);
    const again = await block(a, b);
    expect(again.since).toBe(first.since);
    expect(await json(await call("GET", path, { token }))).toEqual(first);
    expect((await call("PUT", `/v1/admin/users/${a}/blocks/${a}`, { token })).status).toBe(400);
    expect((await call("PUT", path, { token: (await newUser()).token })).status).toBe(403);
    expect(await json(await call("DELETE", path, { token }))).toEqual({ blocker_id: a, blocked_id: b, blocking: false, since: null });
  });
});
