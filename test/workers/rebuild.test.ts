import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { config } from "../../shared/config";
import { indexDraw, userIndexDraw } from "../../shared/item-index";
import type { RebuildResponse, RebuildTarget } from "../../shared/rebuild";
import { runRebuild, type RebuildProgress } from "../../shared/rebuild-run";
import { countDatabaseFor, countDatabases, indexDatabaseFor, userIndexDatabaseFor } from "../../workers/stores/count-databases";
import { indexPage } from "../../workers/stores/index-walk";
import { Alternator } from "../../workers/stores/alternator";
import { edgeVersion } from "../../shared/emissions";
import { splitItem } from "../../workers/stores/item-key";
import { call, freshId, json, like, newUser, tokenFor, unlike } from "./helpers";
import { central, d1Counts, settled } from "./pipeline-helpers";

const userStub = (id: string) => env.USER_LIKES.get(env.USER_LIKES.idFromName(`u:${id}`));
const raw = () => new Alternator({ endpoint: config(env).ALTERNATOR_ENDPOINT, region: "us-east-1", accessKeyId: "t", secretAccessKey: "t", timeoutMs: 5_000 });

async function step(request: { target: RebuildTarget; cursor: string | null; limit?: number }): Promise<RebuildResponse> {
  const response = await call("POST", "/v1/admin/rebuild", { token: await tokenFor(freshId(), { role: "service" }), body: request });
  expect(response.status).toBe(200);
  return await json<RebuildResponse>(response);
}

function memoryCheckpoint() {
  let saved: RebuildProgress | null = null;
  return {
    load: async () => (saved ? structuredClone(saved) : null),
    save: async (progress: RebuildProgress) => void (saved = structuredClone(progress)),
  };
}

const rebuild = (target: RebuildTarget, limit = 2) => runRebuild({ target, limit, send: step, checkpoint: memoryCheckpoint() });

/** Every user's edges as the objects hold them, and as each central table holds them. */
async function edgesEverywhere(users: readonly string[]) {
  const store = await central();
  const out: Record<string, unknown> = {};
  for (const user of users) {
    for (const edge of await userStub(user).edges(null, 100)) {
      const truth = edge.state === 1 ? { state: 1, liked_at: edge.at } : null;
      const read = async (stored: Promise<{ state: number; liked_at: number | null } | null>) => {
        const row = await stored;
        // An unliked edge reads as no row, or a row in state 0.
        return row && row.state === 1 ? { state: 1, liked_at: row.liked_at } : null;
      };
      out[`${user} ${edge.item} ${edge.counter}`] = {
        truth,
        byUser: await read(store.readEdge(user, edge.item, edge.counter)),
        byItem: await read(store.readItemEdge(user, edge.item, edge.counter)),
      };
    }
  }
  return out;
}

describe("rebuilding a store from the objects", () => {
  it("recomputes D1's counts and the central store's tables after they were wiped or restored from an old backup, and a second run changes nothing", async () => {
    const items = [`post:${freshId()}`, `post:${freshId()}`, `post:${freshId()}`];
    const [a, b, c] = items as [string, string, string];
    const users = await Promise.all(Array.from({ length: 5 }, () => newUser()));
    for (const user of users) expect((await like(user.token, splitItem(a)[1])).status).toBe(200);
    for (const user of users.slice(0, 3)) expect((await like(user.token, splitItem(b)[1])).status).toBe(200);
    expect((await like(users[0]!.token, splitItem(c)[1])).status).toBe(200);
    expect((await call("POST", "/v1/save", { token: users[3]!.token, body: { item_id: splitItem(b)[1], item_type: "post" } })).status).toBe(200);
    expect((await unlike(users[1]!.token, splitItem(a)[1])).status).toBe(200);
    expect((await like(users[4]!.token, splitItem(c)[1])).status).toBe(200);
    expect((await unlike(users[4]!.token, splitItem(c)[1])).status).toBe(200);
    for (const user of users) await expect.poll(() => userStub(user.id).pendingDeliveries(), { timeout: 20_000 }).toBe(0);
    const truth = Object.fromEntries(await Promise.all(items.map(async (item) => [item, await settled(item)] as const)));
    expect([truth[a]!.likes, truth[b]!.likes, truth[b]!.saves, truth[c]!.likes]).toEqual([4, 3, 1, 1]);
    const edgesBefore = await edgesEverywhere(users.map((u) => u.id));
    for (const { truth: t, byUser, byItem } of Object.values(edgesBefore) as { truth: unknown; byUser: unknown; byItem: unknown }[]) {
      expect([byUser, byItem]).toEqual([t, t]);
    }

    // D1: a's row lost, c's restored from a backup that holds another count at the same sequence, b's intact.
    const [type, cId] = splitItem(c);
    await countDatabaseFor(env, a).prepare("DELETE FROM item_counts WHERE item_type = ? AND item_id = ?").bind(...splitItem(a)).run();
    await countDatabaseFor(env, c).prepare("UPDATE item_counts SET likes = 99 WHERE item_type = ? AND item_id = ?").bind(type, cId).run();

    // Killed after its first step, then resumed from the checkpoint.
    const checkpoint = memoryCheckpoint();
    let sent = 0;
    await expect(
      runRebuild({
        target: "d1",
        limit: 1,
        checkpoint,
        send: async (request) => {
          if (++sent === 2) throw new Error("killed");
          return await step(request);
        },
      }),
    ).rejects.toThrow("killed");
    expect((await checkpoint.load())!.steps).toBe(1);
    const d1Report = await runRebuild({ target: "d1", limit: 1, send: step, checkpoint });
    expect(d1Report).toMatchObject({ finished: true, checked: 3, written: 1, unchanged: 1, repaired: 1, failed: 0 });
    for (const item of items) {
      await expect.poll(async () => (await d1Counts(item))?.counts, { timeout: 20_000 }).toEqual(await settled(item));
    }

    // The central store: counters and edges lost, and one edge back at an old version where it was still liked.
    const db = raw();
    const store = await central();
    for (const item of items) await db.call("DeleteItem", { TableName: store.counters, Key: { item: { S: item } } });
    for (const key of Object.keys(edgesBefore)) {
      const [user, item, counter] = key.split(" ") as [string, string, string];
      await db.call("DeleteItem", { TableName: store.userLikes, Key: { user: { S: user }, item: { S: `${item}:${counter}` } } });
      await db.call("DeleteItem", { TableName: store.itemLikes, Key: { item: { S: `${item}:${counter}` }, user: { S: user } } });
    }
    const oldLike = { state: { N: "1" }, version: { N: String(edgeVersion(1, 1)) }, liked_at: { N: "1" } };
    await db.call("PutItem", { TableName: store.userLikes, Item: { user: { S: users[1]!.id }, item: { S: `${a}:likes` }, ...oldLike } });
    await db.call("PutItem", { TableName: store.itemLikes, Item: { item: { S: `${a}:likes` }, user: { S: users[1]!.id }, ...oldLike } });

    const centralReport = await rebuild("central");
    expect(centralReport).toMatchObject({ finished: true, written: 3, repaired: 0, failed: 0 });
    // Users: 5 likes of a (one undone, written over the old row), 3 of b, 1 save, 2 of c (one undone, left absent).
    expect(centralReport.edges_written).toBe(5 + 3 + 1 + 1);
    for (const item of items) expect((await store.readCounts(item))?.counts).toEqual(await settled(item));
    expect(await edgesEverywhere(users.map((u) => u.id))).toEqual(edgesBefore);
    expect(await store.readEdge(users[4]!.id, c, "likes")).toBeNull();
    expect((await store.readItemEdge(users[1]!.id, a, "likes"))?.state).toBe(0);

    for (const target of ["d1", "central"] as const) {
      expect(await rebuild(target, 3)).toMatchObject({ finished: true, written: 0, repaired: 0, edges_written: 0, failed: 0 });
    }
  });

  it("backfills the indexes of items and users from the count rows and the central store's edges", async () => {
    const user = await newUser();
    const id = freshId();
    const item = `post:${id}`;
    expect((await like(user.token, id)).status).toBe(200);
    await expect.poll(async () => (await d1Counts(item))?.counts.likes, { timeout: 20_000 }).toBe(1);
    const store = await central();
    await expect.poll(async () => (await store.readEdge(user.id, item, "likes"))?.state, { timeout: 20_000 }).toBe(1);
    const indexed = async () => ({
      item: (await indexDatabaseFor(env, item).prepare("SELECT 1 AS found FROM item_index WHERE draw = ? AND item = ?").bind(indexDraw(item), item).first()) !== null,
      user: (await userIndexDatabaseFor(env, user.id).prepare("SELECT 1 AS found FROM user_index WHERE draw = ? AND user = ?").bind(userIndexDraw(user.id), user.id).first()) !== null,
    });
    await expect.poll(indexed, { timeout: 20_000 }).toEqual({ item: true, user: true });

    // As data counted before the indexes existed.
    await indexDatabaseFor(env, item).prepare("DELETE FROM item_index WHERE item = ?").bind(item).run();
    await userIndexDatabaseFor(env, user.id).prepare("DELETE FROM user_index WHERE user = ?").bind(user.id).run();
    expect(await indexed()).toEqual({ item: false, user: false });

    const report = await rebuild("index", 100);
    expect(report.finished).toBe(true);
    expect(report.written).toBeGreaterThanOrEqual(2);
    expect(await indexed()).toEqual({ item: true, user: true });
    // A second run writes nothing of its own. The project's central store is shared with the files
    // running beside this one, whose new edges a run indexes too; a run that rewrote rows would never reach 0.
    await expect.poll(async () => (await rebuild("index", 100)).written, { timeout: 60_000 }).toBe(0);
  });

  it("refuses a cursor it did not give, or one of another target, and callers without a service token", async () => {
    const service = await tokenFor(freshId(), { role: "service" });
    const first = await step({ target: "d1", cursor: null, limit: 1 });
    const cases: [unknown, string | undefined, number][] = [
      [{ target: "d1", cursor: "not-a-cursor" }, service, 400],
      [{ target: "everything" }, service, 400],
      [{ target: "d1", limit: 0 }, service, 400],
      [{ target: "index", cursor: first.next ?? "eyJwaGFzZSI6Iml0ZW1zIiwiZHJhdyI6MCwia2V5IjoiIn0" }, service, 400],
      [{ target: "d1" }, await tokenFor(freshId()), 403],
      [{ target: "d1" }, undefined, 401],
    ];
    for (const [body, token, status] of cases) {
      const response = await call("POST", "/v1/admin/rebuild", { ...(token ? { token } : {}), body });
      expect([JSON.stringify(body), response.status]).toEqual([JSON.stringify(body), status]);
    }
  });

  it("walks every key of an index when several share a draw, a page ending among them", async () => {
    const draw = 2 ** 31 + 12_345;
    const keys = ["post:1", "post:2", "post:3"];
    // Spread over the databases, as rows with equal draws may be.
    const databases = countDatabases(env);
    for (const [i, key] of keys.entries()) {
      const db = databases[i % databases.length]!;
      await db.prepare("INSERT INTO item_index (draw, item) VALUES (?, ?)").bind(draw, key).run();
    }
    const seen: string[] = [];
    let after = { draw: draw - 1, key: "~" };
    for (let pages = 0; pages < 10; pages++) {
      const page = await indexPage(env, "item_index", after, 1, "test");
      seen.push(...page.entries.filter((entry) => entry.draw === draw).map((entry) => entry.key));
      if (page.done || page.entries.length === 0) break;
      after = page.entries.at(-1)!;
    }
    expect(seen).toEqual(keys);
  });
});
