import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ImportOutcome } from "../../shared/contracts";
import type { ImportEdge } from "../../shared/import";
import { runImport, type ImportProgress } from "../../shared/import-run";
import { call, freshId, json, like, tokenFor } from "./helpers";
import { central, d1Counts, settled } from "./pipeline-helpers";

const userStub = (id: string) => env.USER_LIKES.get(env.USER_LIKES.idFromName(`u:${id}`));

async function* linesOf(lines: readonly string[]) {
  yield* lines;
}

function memoryCheckpoint() {
  let saved: ImportProgress | null = null;
  return {
    load: async () => (saved ? structuredClone(saved) : null),
    save: async (progress: ImportProgress) => void (saved = structuredClone(progress)),
  };
}

async function sendBatch(edges: ImportEdge[]): Promise<ImportOutcome[]> {
  const response = await call("POST", "/v1/admin/import", { token: await tokenFor(freshId(), { role: "service" }), body: { edges } });
  expect(response.status).toBe(200);
  return (await json<{ results: ImportOutcome[] }>(response)).results;
}

const at = (minute: number) => new Date(Date.UTC(2024, 4, 1, 12, minute)).toISOString();
const edge = (user: string, item: string, minute: number, kind = "like") =>
  JSON.stringify({ user_id: user, item_id: item, item_type: "post", liked_at: at(minute), kind });

describe("importing likes from another system", () => {
  it("lands exact counts in the objects, D1 and the central store through a kill and a resume, and a second run changes nothing", async () => {
    const items = [freshId(), freshId(), freshId()];
    const users = Array.from({ length: 12 }, () => freshId());
    // A live like newer than every imported action: the file's older unlike of it must lose (I6).
    const live = freshId();
    expect((await like(await tokenFor(live), items[0]!)).status).toBe(200);

    const lines: string[] = [];
    for (const [u, user] of users.entries()) for (const item of items) lines.push(edge(user, item, u));
    lines.push(edge(users[0]!, items[0]!, 0)); // an exact duplicate
    lines.push(edge(users[1]!, items[0]!, 30, "unlike")); // a later unlike
    lines.push(edge(users[2]!, items[1]!, 1, "unlike")); // an unlike older than the like: superseded
    lines.push(edge(live, items[0]!, 59, "unlike")); // older than the live like: superseded
    lines.push('{"user_id":"007","item_id":"1","item_type":"post","liked_at":"2024-05-01T12:00:00Z","kind":"like"}');
    lines.push("not json");
    lines.push(JSON.stringify({ user_id: users[3], item_id: items[2], item_type: "video", liked_at: at(3), kind: "like" }));
    lines.push(JSON.stringify({ user_id: users[3], item_id: items[2], item_type: "post", liked_at: at(3), kind: "toggle" }));
    lines.push(edge(users[4]!, items[2]!, 40, "unlike"));
    lines.push(edge(users[4]!, items[2]!, 41)); // liked again after the unlike

    const checkpoint = memoryCheckpoint();
    let sent = 0;
    const killedHalfway = runImport({
      lines: linesOf(lines),
      format: "ndjson",
      batchSize: 7,
      checkpoint,
      send: async (batch) => {
        if (++sent === 3) throw new Error("killed");
        return await sendBatch(batch);
      },
    });
    await expect(killedHalfway).rejects.toThrow("killed");
    expect((await checkpoint.load())!.line).toBe(14);

    const report = await runImport({ lines: linesOf(lines), format: "ndjson", batchSize: 7, checkpoint, send: sendBatch });
    expect(report).toMatchObject({ line: lines.length, read: lines.length, applied: 12 * 3 + 2 + 1, duplicates: 1, superseded: 2, refused: 4 });
    expect(report.refusals.map((r) => r.line)).toEqual([41, 42, 43, 44]);
    expect(report.refusals[0]!.reason).toMatch(/^user_id: /);
    expect(report.refusals[2]!.reason).toMatch(/^item_type: /);
    expect(report.refusals[3]!.reason).toMatch(/^kind: /);

    // users[1] unliked items[0]; users[4] unliked and liked items[2] again; the live like stays.
    const expected = { [items[0]!]: 12 - 1 + 1, [items[1]!]: 12, [items[2]!]: 12 };
    const store = await central();
    const read = async () => {
      for (const user of [...users, live]) await expect.poll(() => userStub(user).pendingDeliveries(), { timeout: 20_000 }).toBe(0);
      const out: Record<string, unknown> = {};
      for (const item of items) {
        const key = `post:${item}`;
        out[key] = { object: (await settled(key)).likes, d1: await d1Counts(key), central: await store.readCounts(key) };
      }
      return out;
    };
    const before = await read();
    for (const item of items) {
      const { object, d1, central: stored } = before[`post:${item}`] as { object: number; d1: { counts: { likes: number } }; central: { counts: { likes: number } } };
      expect([object, d1.counts.likes, stored.counts.likes]).toEqual([expected[item], expected[item], expected[item]]);
    }
    expect(await store.readEdge(users[0]!, `post:${items[0]}`, "likes")).toMatchObject({ state: 1, liked_at: Date.parse(at(0)) });
    expect(await store.readItemEdge(users[4]!, `post:${items[2]}`, "likes")).toMatchObject({ state: 1, liked_at: Date.parse(at(41)) });
    expect((await store.readEdge(users[1]!, `post:${items[0]}`, "likes"))?.state).toBe(0);

    const again = await runImport({ lines: linesOf(lines), format: "ndjson", checkpoint: memoryCheckpoint(), send: sendBatch });
    expect(again).toMatchObject({ applied: 0, refused: 4 });
    expect(await read()).toEqual(before);
  });

  it("reads CSV with a header, milliseconds or ISO times, and refuses a time in the future", async () => {
    const [user, item] = [freshId(), freshId()];
    const lines = [
      "user_id,item_id,item_type,liked_at,kind",
      `${user},${item},post,${Date.parse(at(1))},like`,
      `${user},${item},post,${at(2)},unlike`,
      `${user},${item},post,${new Date(Date.now() + 3_600_000).toISOString()},like`,
    ];
    const report = await runImport({ lines: linesOf(lines), format: "csv", checkpoint: memoryCheckpoint(), send: sendBatch });
    expect(report).toMatchObject({ read: 3, applied: 2, duplicates: 0, refused: 1 });
    expect(report.refusals).toEqual([{ line: 4, reason: "liked_at: must not be in the future" }]);
  });
});
