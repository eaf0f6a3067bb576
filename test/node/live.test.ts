// Live counts against a real local server (`npm start` on a free port, its
// own state): real WebSocket clients, likes over HTTP from other connections.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openLive, type LiveSocket } from "../../bench/lib/live-client";
import { idRange, userTokens } from "../../bench/lib/plaudit";
import { removeStateDir, startServer, type LocalServer } from "../../bench/lib/server";
import { printServerOutputOnFailure, serverLog } from "./server-output";

/** Generous: a like reaches sockets through the head's emission (about 1 s) and the queue (about 1 s) on a busy machine. */
const ARRIVAL_MS = 60_000;

let server: LocalServer;
let tokens: Map<string, string>;
const users = idRange(10, 900_000n);

printServerOutputOnFailure(() => serverLog(server?.stateDir));

beforeAll(async () => {
  server = await startServer({ vars: { RATE_LIMIT_PER_MINUTE: "100000", RATE_LIMIT_PER_DAY: "1000000" }, readyTimeoutMs: 120_000 });
  tokens = await userTokens(users, server.secret);
}, 180_000);

afterAll(async () => {
  await server?.stop();
  if (server) removeStateDir(server.stateDir);
}, 30_000);

async function like(user: string, itemId: string): Promise<void> {
  const res = await fetch(`${server.url}/v1/like`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokens.get(user)}`, "content-type": "application/json" },
    body: JSON.stringify({ item_id: itemId, item_type: "post" }),
  });
  expect(res.status).toBe(200);
}

const likesOf = (item: string) => (latest: LiveSocket["latest"]) => latest.get(item)?.likes;

describe("live counts over a real WebSocket", () => {
  it("delivers three items' new counts, and again after a reconnect and resubscribe", async () => {
    const ids = idRange(3, 100_000n);
    const items = ids.map((id) => `post:${id}`);
    const first = await openLive(server.url);
    expect(await first.subscribe(items)).toEqual(items);
    await Promise.all(ids.map((id) => like(users[0]!, id)));
    await first.until((latest) => items.every((item) => likesOf(item)(latest) === 1), ARRIVAL_MS);
    await first.close();

    const second = await openLive(server.url);
    expect(await second.subscribe(items)).toEqual(items);
    await Promise.all(ids.map((id) => like(users[1]!, id)));
    await second.until((latest) => items.every((item) => likesOf(item)(latest) === 2), ARRIVAL_MS);
    expect([...second.latest.keys()].sort()).toEqual([...items].sort());
    await second.close();
  }, 180_000);

  it("delivers one like to all of 1,000 subscribers of one item", async () => {
    const [id] = idRange(1, 200_000n);
    const item = `post:${id}`;
    const sockets: LiveSocket[] = [];
    try {
      for (let opened = 0; opened < 1_000; opened += 100) {
        const batch = await Promise.all(Array.from({ length: 100 }, () => openLive(server.url, 60_000)));
        await Promise.all(batch.map((s) => s.subscribe([item])));
        sockets.push(...batch);
      }
      await like(users[2]!, id!);
      await Promise.all(sockets.map((s) => s.until((latest) => likesOf(item)(latest) === 1, ARRIVAL_MS)));
      expect(sockets.filter((s) => s.latest.get(item)?.likes === 1)).toHaveLength(1_000);
    } finally {
      await Promise.all(sockets.map((s) => s.close()));
    }
  }, 300_000);
});
