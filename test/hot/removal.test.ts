import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import type { RemovalResponse } from "../../shared/removal";
import { userIndexDatabaseFor } from "../../workers/stores/count-databases";
import { call, freshId, json, like, tokenFor } from "../workers/helpers";
import { central, d1Counts, settled } from "../workers/pipeline-helpers";
import { SHARDS, child, delivered, handedOver, head, likeBelowHotRate, makeHot, user, users, type User } from "./hot-helpers";

const service = () => tokenFor(freshId(), { role: "service" });
const SETTLE_MS = 120_000;

async function removalOf(userId: string): Promise<RemovalResponse> {
  const response = await call("GET", `/v1/admin/users/${userId}/removal`, { token: await service() });
  expect(response.status).toBe(200);
  return await json<RemovalResponse>(response);
}

/** Polls the status endpoint until the removal is done; fails the test if it never is. */
async function removalDone(userId: string): Promise<RemovalResponse> {
  return await vi.waitFor(
    async () => {
      const state = await removalOf(userId);
      expect(state.phase).toBe("done");
      return state;
    },
    { timeout: SETTLE_MS, interval: 200 },
  );
}

/** Rows naming the user in an item's head and children (tables that exist only once an object wrote). */
async function itemRowsOf(key: string, userId: string): Promise<number> {
  const count = (state: DurableObjectState) =>
    state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM sqlite_master WHERE name = 'edges'").one().n === 0
      ? 0
      : state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM edges WHERE user = ?", userId).one().n;
  let rows = await runInDurableObject(head(key), (_, state) => count(state));
  for (let index = 0; index < SHARDS; index++) rows += await runInDurableObject(child(key, index), (_, state) => count(state));
  return rows;
}

/**
 * The item's likes in its object, D1 and the central store, polled until all
 * three are `expected` (a hot item's head learns its children's counts from
 * their reports, a moment after their commits); the last reading otherwise.
 */
async function countsEverywhere(key: string, expected: number): Promise<[number, number, number]> {
  let last: [number, number, number] = [-1, -1, -1];
  try {
    await vi.waitFor(
      async () => {
        // An acknowledgement lost in the crash is made good by the object's resend, 30 s and more after its send.
        const object = (await settled(key, SETTLE_MS)).likes;
        const inD1 = (await d1Counts(key))?.counts.likes ?? 0;
        const inCentral = (await (await central()).readCounts(key))?.counts.likes ?? 0;
        last = [object, inD1, inCentral];
        expect(last).toEqual([expected, expected, expected]);
      },
      { timeout: SETTLE_MS, interval: 100 },
    );
  } catch {
    // The caller's assertion shows the three values.
  }
  return last;
}

/**
 * A read of the local central store, tried again while it fails: files side
 * by side share one, and under their load its breaker opens for a while.
 */
async function storeRead<T>(read: () => Promise<T>): Promise<T> {
  return await vi.waitFor(read, { timeout: SETTLE_MS, interval: 200 });
}

/** Runs the tasks five at a time, in order. */
async function inTurn<T>(tasks: readonly (() => Promise<T>)[]): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < tasks.length; i += 5) out.push(...(await Promise.all(tasks.slice(i, i + 5).map((task) => task()))));
  return out;
}

async function likeAll(u: User, ids: readonly string[]): Promise<void> {
  const answers = await Promise.all(ids.map((id) => like(u.token, id)));
  expect(answers.map((r) => r.status)).toEqual(ids.map(() => 200));
}

describe("removing a user", () => {
  it("deletes an account with likes on 100 items, hot and cold, across a crash midway: every count exact everywhere, no row of the user left", async () => {
    const victim = (await users(1))[0]!;
    const others = await users(2);
    // A hot item the victim liked before it split (the edge is handed over to a child) and one liked after (a child holds it from the start).
    const before = freshId();
    await likeBelowHotRate([victim], before);
    const beforeWave = await makeHot(before);
    expect(await handedOver(`post:${before}`)).toBe(true);
    const after = freshId();
    const afterWave = await makeHot(after);
    await likeAll(victim, [after]);
    const cold = Array.from({ length: 98 }, () => freshId());
    await likeAll(victim, cold);
    for (const u of others) await likeAll(u, cold.slice(0, 10));
    expect(await delivered([victim, ...others].map((u) => u.id))).toBe(true);
    const expected = new Map<string, number>([
      [`post:${before}`, beforeWave.length],
      [`post:${after}`, afterWave.length],
      ...cold.map((id, i): [string, number] => [`post:${id}`, i < 10 ? others.length : 0]),
    ]);
    await inTurn([...expected.keys()].map((key) => () => settled(key, SETTLE_MS)));

    const started = await call("DELETE", `/v1/admin/users/${victim.id}`, { token: await service() });
    expect(started.status).toBe(200);
    expect(started.headers.get("location")).toBe(`/v1/admin/users/${victim.id}/removal`);
    expect((await json<RemovalResponse>(started)).barred).toBe(true);
    // A crash once the first batch of unlikes is committed: the job resumes from its stored row.
    await vi.waitFor(async () => expect((await removalOf(victim.id)).removed.likes).toBeGreaterThan(0), { timeout: 20_000, interval: 50 });
    await abortAllDurableObjects();

    const done = await removalDone(victim.id);
    expect(done).toMatchObject({ kind: "delete", barred: true, removed: { likes: 100, saves: 0 }, items_forgotten: 100, remaining: { on: 0, undelivered: 0, edges: 0 } });
    expect((await like(victim.token, cold[0]!)).status).toBe(403);

    const store = await central();
    // A few items at a time: the local central store times out under a hundred at once.
    const found = await inTurn(
      [...expected].map(([key, likes]) => async () => ({
        key,
        counts: await countsEverywhere(key, likes),
        itemRows: await itemRowsOf(key, victim.id),
        byUser: await storeRead(() => store.readEdge(victim.id, key, "likes")),
        byItem: await storeRead(() => store.readItemEdge(victim.id, key, "likes")),
      })),
    );
    expect(found).toEqual([...expected].map(([key, likes]) => ({ key, counts: [likes, likes, likes], itemRows: 0, byUser: null, byItem: null })));
    const kept = await runInDurableObject(user(victim.id), async (_, state) => {
      const sql = state.storage.sql;
      return {
        edges: sql.exec<{ n: number }>("SELECT count(*) AS n FROM edges").one().n,
        outbox: (JSON.parse(sql.exec<{ outbox: string }>("SELECT outbox FROM state").one().outbox) as unknown[]).length,
        ids: sql.exec<{ n: number }>("SELECT (SELECT count(*) FROM state WHERE user IS NOT NULL) + (SELECT count(*) FROM removal WHERE user != '') AS n").one().n,
        alarm: await state.storage.getAlarm(),
      };
    });
    // Done and idle: no id of the user, nothing to deliver, no alarm.
    expect(kept).toEqual({ edges: 0, outbox: 0, ids: 0, alarm: null });
    const index = userIndexDatabaseFor(env, victim.id);
    expect(await index.prepare("SELECT count(*) AS n FROM user_index WHERE user = ?").bind(victim.id).first<{ n: number }>()).toEqual({ n: 0 });
    // Asking again changes nothing.
    const again = await call("DELETE", `/v1/admin/users/${victim.id}`, { token: await service() });
    expect(await json<RemovalResponse>(again)).toMatchObject({ phase: "done", removed: { likes: 100 } });
  }, 400_000);

  it("purges 50 accounts: their likes undone, counts healed, barred until the host app lifts it", async () => {
    const fakes = await users(50);
    const real = await users(3);
    const shared = freshId();
    const own = fakes.map(() => freshId());
    for (const [i, u] of fakes.entries()) await likeAll(u, [shared, own[i]!]);
    for (const u of real) await likeAll(u, [shared]);
    expect(await delivered([...fakes, ...real].map((u) => u.id))).toBe(true);

    const purge = await call("POST", "/v1/admin/purge", { token: await service(), body: { user_ids: fakes.map((u) => u.id) } });
    expect(purge.status).toBe(200);
    const answer = await json<{ purged: RemovalResponse[] }>(purge);
    expect(answer.purged.map((p) => [p.user_id, p.kind, p.barred])).toEqual(fakes.map((u) => [u.id, "purge", true]));
    for (const u of fakes) expect(await removalDone(u.id)).toMatchObject({ kind: "purge", removed: { likes: 2, saves: 0 }, remaining: { on: 0, undelivered: 0 } });

    expect(await countsEverywhere(`post:${shared}`, 3)).toEqual([3, 3, 3]);
    for (const id of own.slice(0, 5)) expect(await countsEverywhere(`post:${id}`, 0)).toEqual([0, 0, 0]);
    expect((await like(fakes[0]!.token, shared)).status).toBe(403);
    // Nor can an import bring back what the purge undid.
    const imported = await call("POST", "/v1/admin/import", {
      token: await service(),
      body: { edges: [{ user_id: fakes[2]!.id, item_id: shared, item_type: "post", liked_at: new Date().toISOString(), kind: "like" }] },
    });
    expect(await json(imported)).toEqual({ results: ["barred"] });

    const lifted = await call("DELETE", `/v1/admin/users/${fakes[0]!.id}/bar`, { token: await service() });
    expect(lifted.status).toBe(200);
    expect((await json<RemovalResponse>(lifted)).barred).toBe(false);
    expect((await like(fakes[0]!.token, shared)).status).toBe(200);
    expect((await like(fakes[1]!.token, shared)).status).toBe(403);
    expect(await delivered([fakes[0]!.id])).toBe(true);
    expect(await countsEverywhere(`post:${shared}`, 4)).toEqual([4, 4, 4]);
  }, 400_000);

  it("keeps a deleted account barred, and answers bad calls with clear errors", async () => {
    const [gone] = await users(1);
    const started = await call("DELETE", `/v1/admin/users/${gone!.id}`, { token: await service() });
    expect(started.status).toBe(200);
    await removalDone(gone!.id);
    const lift = await call("DELETE", `/v1/admin/users/${gone!.id}/bar`, { token: await service() });
    expect(lift.status).toBe(409);
    expect((await json(lift)).error).toBe("not_purged");
    expect((await call("DELETE", `/v1/admin/users/${gone!.id}`, { token: gone!.token })).status).toBe(403);
    expect((await call("POST", "/v1/admin/purge", { token: await service(), body: { user_ids: [] } })).status).toBe(400);
    expect((await call("GET", "/v1/admin/users/x/removal", { token: await service() })).status).toBe(400);
    const never = await removalOf(freshId());
    expect(never).toMatchObject({ kind: null, phase: null, barred: false });
  }, 400_000);
});
