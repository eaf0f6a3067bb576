import { config } from "../../shared/config";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { Alternator } from "../../workers/stores/alternator";
import { centralStore } from "../../workers/stores/central-tables";
import type { EmittedEdge } from "../../shared/emissions";
import { freshId, tokenFor } from "./helpers";
import { sample, scrape } from "./metrics-exposition";
import { central, d1Row, deliver, headEmission } from "./pipeline-helpers";

const key = () => `post:${freshId()}`;
const snapshot = (seq: number, likes: number) => ({ seq, counts: { likes, views: 0, shares: 0, saves: 0 } });

describe("the central store (a real DynamoDB-API server)", () => {
  it("creates its tables on first use", async () => {
    const prefix = `t${freshId()}_`;
    const item = key();
    expect(await deliver([headEmission(item, { seq: 1, counts: { likes: 1 } })], { ALTERNATOR_TABLE_PREFIX: prefix })).toEqual({
      acked: ["m0"],
      retried: [],
    });
    const db = new Alternator({ endpoint: config(env).ALTERNATOR_ENDPOINT, region: "us-east-1", accessKeyId: "t", secretAccessKey: "t", timeoutMs: 5_000 });
    const { TableNames } = await db.call<{ TableNames: string[] }>("ListTables", {});
    expect(TableNames.filter((name) => name.startsWith(prefix)).sort()).toEqual([`${prefix}counters`, `${prefix}item_likes`, `${prefix}user_likes`]);
    const store = await centralStore({ ...env, ALTERNATOR_TABLE_PREFIX: prefix });
    expect((await store!.readCounts(item))?.counts.likes).toBe(1);
  });

  it("refuses a snapshot that is not newer than the stored one, and keeps the stored one", async () => {
    const store = await central();
    const item = key();
    expect(await store.writeSnapshot(item, snapshot(5, 5))).toBe("written");
    expect(await store.writeSnapshot(item, snapshot(4, 4))).toBe("stale");
    expect(await store.writeSnapshot(item, snapshot(5, 9))).toBe("stale");
    expect(await store.readCounts(item)).toEqual(snapshot(5, 5));
  });

  it("refuses an edge version that is not newer, counting the incarnation above the sequence", async () => {
    const store = await central();
    const [item, user] = [key(), freshId()];
    expect(await store.writeEdge(item, [user, "likes", 1, 1, 7])).toBe("written");
    expect(await store.writeEdge(item, [user, "likes", 0, 1, 6])).toBe("stale");
    expect(await store.writeEdge(item, [user, "likes", 0, 2, 1])).toBe("written");
    expect(await store.writeEdge(item, [user, "likes", 1, 1, 99])).toBe("stale");
    expect(await store.readEdge(user, item, "likes")).toEqual({ state: 0, version: 2 * 2 ** 32 + 1, liked_at: null });
  });

  it("is unchanged by a replayed batch", async () => {
    const [a, b] = [key(), key()];
    const users = [freshId(), freshId()];
    const edges: EmittedEdge[] = [
      [users[0]!, "likes", 1, 1, 1],
      [users[1]!, "saves", 1, 1, 2],
    ];
    const batch = [headEmission(a, { seq: 2, counts: { likes: 1, saves: 1 }, edges }), headEmission(b, { seq: 1, counts: { likes: 3 } })];
    await deliver(batch);
    const store = await central();
    const read = async () => ({
      counts: [await store.readCounts(a), await store.readCounts(b)],
      edges: [await store.readEdge(users[0]!, a, "likes"), await store.readEdge(users[1]!, a, "saves")],
      d1: [await d1Row(a), await d1Row(b)],
    });
    const before = await read();

    expect(await deliver(batch)).toEqual({ acked: ["m0", "m1"], retried: [] });
    expect(await read()).toEqual(before);
    expect(await store.writeSnapshot(a, batch[0]!.snapshot!)).toBe("stale");
    expect(await store.writeEdge(a, edges[0]!)).toBe("stale");
  });

  it("counts every call it sends by operation and outcome in /metrics", async () => {
    const service = await tokenFor(freshId(), { role: "service" });
    const calls = async () => {
      const families = await scrape(service);
      const of = (operation: string, outcome: string) => sample(families, "plaudit_central_store_calls_total", { operation, outcome });
      return { getOk: of("GetItem", "ok"), queryOk: of("Query", "ok"), scanOk: of("Scan", "ok"), updateOk: of("UpdateItem", "ok"), updateRefused: of("UpdateItem", "refused") };
    };
    const store = await central();
    const before = await calls();
    const [item, user] = [key(), freshId()];
    expect(await store.writeSnapshot(item, snapshot(2, 2))).toBe("written");
    // Not newer: the store refuses it with a failed condition, counted as refused, not failed.
    expect(await store.writeSnapshot(item, snapshot(1, 1))).toBe("stale");
    expect((await store.readCounts(item))?.seq).toBe(2);
    expect(await store.readEdge(user, item, "likes")).toBeNull();
    expect((await store.likersPage(item, "likes", null, 10)).likers).toEqual([]);
    expect((await store.scanUsers(undefined, 1)).users.length).toBeLessThanOrEqual(1);
    const after = await calls();
    // Other tests may call the store meanwhile: counters only go up, so each moved by at least this test's calls.
    expect(after.updateOk - before.updateOk).toBeGreaterThanOrEqual(1);
    expect(after.updateRefused - before.updateRefused).toBeGreaterThanOrEqual(1);
    expect(after.getOk - before.getOk).toBeGreaterThanOrEqual(2);
    expect(after.queryOk - before.queryOk).toBeGreaterThanOrEqual(1);
    expect(after.scanOk - before.scanOk).toBeGreaterThanOrEqual(1);
  });
});
