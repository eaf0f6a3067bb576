import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { MAX_SOCKETS_PER_HUB, type LiveHub } from "../../durable-objects/LiveHub";
import { config } from "../../shared/config";
import { describe, expect, it, vi } from "vitest";
import type { LiveServerMessage } from "../../shared/live";
import { UNKNOWN_ITEM } from "../../shared/privacy";
import { call, fetchWorker, freshId, json, tokenFor } from "./helpers";
import { sample, scrape } from "./metrics-exposition";
import { historyWrites } from "../../workers/stores/item-history";
import { deliver, headEmission } from "./pipeline-helpers";

type Socket = { ws: WebSocket; messages: LiveServerMessage[]; next(type: LiveServerMessage["type"]): Promise<LiveServerMessage> };

async function openLive(): Promise<Socket> {
  const res = await fetchWorker(new Request("http://plaudit.test/v1/live", { headers: { upgrade: "websocket" } }));
  expect(res.status).toBe(101);
  const ws = res.webSocket!;
  ws.accept();
  const messages: LiveServerMessage[] = [];
  ws.addEventListener("message", (event) => {
    messages.push(JSON.parse(event.data as string));
  });
  let seen = 0;
  const next = async (type: LiveServerMessage["type"]) =>
    await vi.waitFor(
      () => {
        const index = messages.findIndex((m, i) => i >= seen && m.type === type);
        expect(index, `a ${type} message`).toBeGreaterThanOrEqual(0);
        seen = index + 1;
        return messages[index]!;
      },
      { timeout: 10_000, interval: 20 },
    );
  return { ws, messages, next };
}

const ref = (key: string) => ({ item_type: key.split(":")[0], item_id: key.split(":")[1] });

/** A socket subscribed to `items`, its `subscribed` answer already read. */
async function watching(items: string[]): Promise<Socket> {
  const socket = await openLive();
  socket.ws.send(JSON.stringify({ type: "subscribe", items: items.map(ref) }));
  expect(await socket.next("subscribed")).toEqual({ type: "subscribed", items });
  return socket;
}

const hubOf = async (item: string) => env.LIVE_HUB.get(env.LIVE_HUB.idFromName(`hub:${(await watchers(item))[0]!}`));

async function watchers(item: string): Promise<number[]> {
  const { results } = await env.DB.prepare("SELECT hub FROM live_watchers WHERE item = ?").bind(item).all<{ hub: number }>();
  return results.map((r) => r.hub);
}

describe("GET /v1/live", () => {
  it("counts a hub's registry writes in the D1 metrics, as the Worker's D1 calls are", async () => {
    const service = await tokenFor(freshId(), { role: "service" });
    const hubs = async () => {
      const families = await scrape(service);
      return {
        batches: sample(families, "plaudit_d1_batches_total", { caller: "live_hub", database: "DB" }),
        queries: sample(families, "plaudit_d1_queries_total", { caller: "live_hub", database: "DB" }),
        rows: sample(families, "plaudit_d1_rows_written_total", { caller: "live_hub" }),
      };
    };
    const before = await hubs();
    const items = [`post:${freshId()}`, `post:${freshId()}`];
    const socket = await watching(items);
    try {
      expect(await watchers(items[1]!)).toHaveLength(1);
      // Other files' hubs may write meanwhile: at least this hub's batch of two inserts.
      await vi.waitFor(
        async () => {
          const after = await hubs();
          expect(after.batches).toBeGreaterThanOrEqual(before.batches + 1);
          expect(after.queries).toBeGreaterThanOrEqual(before.queries + 2);
          expect(after.rows).toBeGreaterThanOrEqual(before.rows + 2);
        },
        { timeout: 10_000, interval: 100 },
      );
    } finally {
      socket.ws.close();
    }
  });

  it("answers 426 with the error shape to a request that is not an upgrade", async () => {
    const res = await call("GET", "/v1/live");
    expect(res.status).toBe(426);
    expect(await json(res)).toMatchObject({ error: "upgrade_required" });
  });

  it("sends the counts the aggregator writes, one message per tick for all of a socket's changed items", async () => {
    const [a, b, c] = [`post:${freshId()}`, `reel:${freshId()}`, `comment:${freshId()}`];
    const socket = await watching([a, b, c]);
    expect(await watchers(a)).toHaveLength(1);

    await deliver([headEmission(a, { seq: 2, counts: { likes: 2 } }), headEmission(b, { seq: 1, counts: { views: 7 } })]);
    const message = await socket.next("counts");
    expect(message).toMatchObject({
      type: "counts",
      counts: { [a]: { likes: 2, views: 0, shares: 0, saves: 0 }, [b]: { likes: 0, views: 7, shares: 0, saves: 0 } },
    });
    expect(Object.keys((message as { counts: object }).counts)).toHaveLength(2);
    socket.ws.close(1000);
  });

  it("sends only the items whose history took the batch's snapshot: one older than its history is not sent", async () => {
    const [behind, fresh] = [`post:${freshId()}`, `post:${freshId()}`];
    // The day before, a newer snapshot of `behind` reached its history (its counts row is still missing, so its count write below takes).
    const earlier = historyWrites(env.DB, new Map([[behind, { seq: 9, counts: { likes: 9, views: 0, shares: 0, saves: 0 } }]]), Date.now() - 86_400_000);
    await env.DB.batch(earlier.statements);
    const socket = await watching([behind, fresh]);
    await deliver([headEmission(behind, { seq: 5, counts: { likes: 5 } }), headEmission(fresh, { seq: 1, counts: { likes: 1 } })]);
    const message = await socket.next("counts");
    expect(message).toMatchObject({ counts: { [fresh]: { likes: 1, views: 0, shares: 0, saves: 0 } } });
    expect(Object.keys((message as { counts: object }).counts)).toEqual([fresh]);
    socket.ws.close(1000);
  });

  it("drops an update older than the last one sent for its item", async () => {
    const item = `post:${freshId()}`;
    const socket = await watching([item]);
    await deliver([headEmission(item, { seq: 5, counts: { likes: 5 } })]);
    await socket.next("counts");
    const hub = await hubOf(item);
    await hub.publish([{ item, seq: 4, counts: { likes: 4, views: 0, shares: 0, saves: 0 }, settings: UNKNOWN_ITEM }]);
    await hub.publish([{ item, seq: 6, counts: { likes: 6, views: 0, shares: 0, saves: 0 }, settings: UNKNOWN_ITEM }]);
    expect(await socket.next("counts")).toMatchObject({ counts: { [item]: { likes: 6 } } });
    expect(socket.messages.filter((m) => m.type === "counts")).toHaveLength(2);
    socket.ws.close(1000);
  });

  it("takes a hub's registration away when its last watcher leaves", async () => {
    const item = `post:${freshId()}`;
    const socket = await watching([item]);
    expect(await watchers(item)).toHaveLength(1);
    socket.ws.send(JSON.stringify({ type: "unsubscribe", items: [ref(item)] }));
    expect(await socket.next("subscribed")).toEqual({ type: "subscribed", items: [] });
    expect(await watchers(item)).toEqual([]);
    socket.ws.close(1000);
  });

  it("lets a hub that no longer watches an item drop the row naming it when the item is next published", async () => {
    const item = `post:${freshId()}`;
    await env.DB.prepare("INSERT INTO live_watchers (item, hub) VALUES (?, 3)").bind(item).run();
    await deliver([headEmission(item, { seq: 1, counts: { likes: 1 } })]);
    await vi.waitFor(async () => expect(await watchers(item)).toEqual([]), { timeout: 10_000, interval: 50 });
  });

  it("answers bad messages and a 101st item with an error, and keeps the socket", async () => {
    const socket = await openLive();
    socket.ws.send("not json");
    expect(await socket.next("error")).toMatchObject({ error: "invalid_request" });
    socket.ws.send(JSON.stringify({ type: "subscribe", items: [], padding: "x".repeat(16 * 1024) }));
    expect(await socket.next("error")).toMatchObject({ error: "payload_too_large" });
    socket.ws.send(JSON.stringify({ type: "subscribe", items: [{ item_id: "007", item_type: "post" }] }));
    expect(await socket.next("error")).toMatchObject({ error: "invalid_request", details: [{ path: "items.0.item_id" }] });
    const many = Array.from({ length: 100 }, () => ({ item_id: freshId(), item_type: "post" }));
    socket.ws.send(JSON.stringify({ type: "subscribe", items: many }));
    expect(((await socket.next("subscribed")) as { items: string[] }).items).toHaveLength(100);
    socket.ws.send(JSON.stringify({ type: "subscribe", items: [{ item_id: freshId(), item_type: "post" }] }));
    expect(await socket.next("error")).toMatchObject({ error: "invalid_request", message: expect.stringContaining("at most 100") });
    socket.ws.close(1000);
  });
});

describe("full hubs", () => {
  it("answer 503 with Retry-After when every hub tried is full, and the socket opens again once they have room", async () => {
    const hubs = Array.from({ length: config(env).LIVE_HUBS }, (_, n) => env.LIVE_HUB.get(env.LIVE_HUB.idFromName(`hub:${n}`)));
    const setRoom = (maxSockets: number) =>
      Promise.all(hubs.map((hub) => runInDurableObject(hub, (instance: LiveHub) => void (instance.limits.maxSockets = maxSockets))));
    await setRoom(0);
    try {
      const res = await fetchWorker(new Request("http://plaudit.test/v1/live", { headers: { upgrade: "websocket" } }));
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("1");
      expect(await json(res)).toMatchObject({ error: "unavailable" });
    } finally {
      await setRoom(MAX_SOCKETS_PER_HUB);
    }
    (await watching([`post:${freshId()}`])).ws.close(1000);
  });
});

describe("GET /live", () => {
  it("serves the demo page inline", async () => {
    const res = await call("GET", "/live");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(await res.text()).toContain("/v1/live");
  });
});
