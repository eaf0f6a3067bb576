import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { config } from "../../shared/config";
import { Alternator } from "../../workers/stores/alternator";
import { ITEM_LIKES_BY_TIME } from "../../workers/stores/central-tables";
import { freshId, like, newUser, unlike } from "./helpers";
import { central, itemStub, settled } from "./pipeline-helpers";

const userStub = (id: string) => env.USER_LIKES.get(env.USER_LIKES.idFromName(`u:${id}`));

async function userEdgeTime(user: string, item: string): Promise<number> {
  return await runInDurableObject(userStub(user), (_, state) =>
    state.storage.sql.exec<{ at: number }>("SELECT at FROM edges WHERE item = ? AND counter = 'likes'", item).one().at,
  );
}

async function itemEdgeTime(user: string, item: string): Promise<number> {
  return await runInDurableObject(itemStub(item), (_, state) =>
    state.storage.sql.exec<{ at: number }>("SELECT at FROM edges WHERE user = ? AND counter = 'likes'", user).one().at,
  );
}

/** The item's likers through the central store's time index, oldest first. */
async function likersByTime(item: string): Promise<string[]> {
  const db = new Alternator({ endpoint: config(env).ALTERNATOR_ENDPOINT, region: "us-east-1", accessKeyId: "t", secretAccessKey: "t", timeoutMs: 5_000 });
  const { Items } = await db.call<{ Items: { user: { S: string } }[] }>("Query", {
    TableName: (await central()).itemLikes,
    IndexName: ITEM_LIKES_BY_TIME,
    KeyConditionExpression: "#item = :item",
    ExpressionAttributeNames: { "#item": "item" },
    ExpressionAttributeValues: { ":item": { S: `${item}:likes` } },
  });
  return Items.map((row) => row.user.S);
}

describe("an edge keeps the time its user asked for it", () => {
  it("carries one liked_at from the user's object to the item's, to both central tables", async () => {
    const id = freshId();
    const item = `post:${id}`;
    const user = await newUser();
    const before = Date.now();
    expect((await like(user.token, id)).status).toBe(200);
    const after = Date.now();
    await settled(item);

    const at = await userEdgeTime(user.id, item);
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(after);
    expect(await itemEdgeTime(user.id, item)).toBe(at);
    const store = await central();
    expect(await store.readEdge(user.id, item, "likes")).toEqual({ state: 1, version: 2 ** 32 + 1, liked_at: at });
    expect(await store.readItemEdge(user.id, item, "likes")).toEqual({ state: 1, version: 2 ** 32 + 1, liked_at: at });
  });

  it("lists an item's likers in liked_at order, and an unlike removes the liker and the time", async () => {
    const id = freshId();
    const item = `post:${id}`;
    const users = [await newUser(), await newUser(), await newUser()];
    for (const user of users) {
      expect((await like(user.token, id)).status).toBe(200);
      // Distinct times: the order below must follow liked_at, not the user ids.
      const at = Date.now();
      await expect.poll(() => Date.now(), { timeout: 1_000, interval: 2 }).toBeGreaterThan(at);
    }
    await settled(item);
    expect(await likersByTime(item)).toEqual(users.map((u) => u.id));

    expect((await unlike(users[1]!.token, id)).status).toBe(200);
    await expect.poll(async () => (await central()).readEdge(users[1]!.id, item, "likes"), { timeout: 20_000 }).toMatchObject({ state: 0 });
    expect(await likersByTime(item)).toEqual([users[0]!.id, users[2]!.id]);
    const unliked = await (await central()).readItemEdge(users[1]!.id, item, "likes");
    expect(unliked).toEqual({ state: 0, version: 2 ** 32 + 2, liked_at: null });
  });

  it("never lets an older edge and its time replace a newer one in the central store", async () => {
    const store = await central();
    const [item, user] = [`post:${freshId()}`, freshId()];
    expect(await store.writeEdge(item, [user, "likes", 1, 1, 5, 5_000])).toBe("written");
    expect(await store.writeEdge(item, [user, "likes", 1, 1, 4, 9_000])).toBe("stale");
    expect(await store.readEdge(user, item, "likes")).toEqual({ state: 1, version: 2 ** 32 + 5, liked_at: 5_000 });
    expect(await store.readItemEdge(user, item, "likes")).toEqual({ state: 1, version: 2 ** 32 + 5, liked_at: 5_000 });
  });
});
