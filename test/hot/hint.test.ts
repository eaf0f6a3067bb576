import { describe, expect, it } from "vitest";
import { childFor, HEAD } from "../../shared/placement";
import { call, freshId, json, like, tokenFor, unlike } from "../workers/helpers";
import { SHARDS, cooled, delivered, describeItem, headEdges, homeOf, settledLikes, users } from "./hot-helpers";

const hint = async (id: string, token?: string) => call("POST", `/v1/admin/items/post/${id}/hot`, { token: token ?? (await tokenFor(freshId(), { role: "service" })) });

describe("the host app's hint", () => {
  it("splits an item before its first like: every like goes to a child, the head applies none", async () => {
    const id = freshId();
    const key = `post:${id}`;
    const res = await hint(id);
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ item_id: id, item_type: "post", hot: true, shards: SHARDS, counts: { likes: 0 } });
    const likers = await users(12);
    const answers = await Promise.all(likers.map((u) => like(u.token, id)));
    expect(answers.map((r) => r.status)).toEqual(likers.map(() => 200));
    expect(await delivered(likers.map((u) => u.id))).toBe(true);
    expect(await settledLikes(key, likers.length)).toBe(likers.length);
    for (const u of likers) expect(await homeOf(u.id, key)).toBe(childFor(u.id, SHARDS));
    const { calls } = await describeItem(key);
    // Every apply the head saw was a refusal of a new edge: it holds none.
    expect(calls.applies).toBe(calls.refused);
    expect((await headEdges(key)).held).toBe(0);
  });

  it("merges a hinted item that stays cold back into its head, and counts its later likes there", async () => {
    const id = freshId();
    const key = `post:${id}`;
    const early = await users(2);
    await Promise.all(early.map((u) => like(u.token, id)));
    expect(await delivered(early.map((u) => u.id))).toBe(true);
    expect((await json(await hint(id))).hot).toBe(true);
    expect(await cooled(key)).toBe(true);
    expect((await describeItem(key)).shards).toBe(SHARDS);
    const [late] = await users(1);
    expect((await like(late!.token, id)).status).toBe(200);
    expect(await delivered([late!.id])).toBe(true);
    expect(await homeOf(late!.id, key)).toBe(HEAD);
    // The likes from before the hint were handed over at the split and stay with their children.
    expect((await unlike(early[0]!.token, id)).status).toBe(200);
    expect(await delivered([early[0]!.id])).toBe(true);
    expect(await settledLikes(key, 2)).toBe(2);
  });

  it("changes nothing when hinted twice, and refuses callers without a service token", async () => {
    const id = freshId();
    expect((await hint(id)).status).toBe(200);
    const again = await json(await hint(id));
    expect(again).toMatchObject({ hot: true, shards: SHARDS });
    const user = await hint(id, await tokenFor(freshId()));
    expect(user.status).toBe(403);
    expect(await json(user)).toHaveProperty("error");
    const bad = await call("POST", `/v1/admin/items/post/not-a-number/hot`, { token: await tokenFor(freshId(), { role: "service" }) });
    expect(bad.status).toBe(400);
  });
});
