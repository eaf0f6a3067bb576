import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { config } from "../../shared/config";
import { countDatabaseIndex } from "../../shared/count-databases";
import { eventQueueIndex } from "../../shared/event-queues";
import { call, freshId, json, like, newUser, tokenFor, unlike } from "../workers/helpers";
import { sample, scrape } from "../workers/metrics-exposition";
import { central, d1Counts, deliver, headEmission, settled } from "../workers/pipeline-helpers";

let service: string;
beforeAll(async () => {
  service = await tokenFor(freshId(), { role: "service" });
});

/** A fresh item whose counts live in database `index` (and, when given, whose emissions travel on queue `queue`). */
function itemIn(index: number, queue?: number): string {
  for (;;) {
    const item = `post:${freshId()}`;
    if (countDatabaseIndex(item, 2) === index && (queue === undefined || eventQueueIndex(item, 2) === queue)) return item;
  }
}

const indexedIn = async (db: D1Database, item: string) => (await db.prepare("SELECT 1 AS found FROM item_index WHERE item = ?").bind(item).first()) !== null;

const rowIn = (db: D1Database, item: string) =>
  db.prepare("SELECT likes FROM item_counts WHERE item_type = 'post' AND item_id = ?").bind(item.split(":")[1]).first<{ likes: number }>();

describe("counts spread over two D1 databases", () => {
  it("runs with K = 2 and Q = 2", () => {
    expect(config(env).COUNT_DATABASES).toBe(2);
    expect(config(env).EVENT_QUEUES).toBe(2);
  });

  it("writes each item to its own database and reads a feed of both with one query to each", async () => {
    const [first, second] = [itemIn(0), itemIn(1)];
    expect(await deliver([headEmission(first, { seq: 1, counts: { likes: 5 } }), headEmission(second, { seq: 1, counts: { likes: 7 } })])).toEqual({
      acked: ["m0", "m1"],
      retried: [],
    });
    expect(await rowIn(env.DB, first)).toEqual({ likes: 5 });
    expect(await rowIn(env.DB_1, first)).toBeNull();
    expect(await rowIn(env.DB_1, second)).toEqual({ likes: 7 });
    expect(await rowIn(env.DB, second)).toBeNull();
    // Each item's index row sits in the other database, so losing a count row never loses the entry that finds it.
    expect([await indexedIn(env.DB_1, first), await indexedIn(env.DB, first)]).toEqual([true, false]);
    expect([await indexedIn(env.DB, second), await indexedIn(env.DB_1, second)]).toEqual([true, false]);

    const queries = async () => {
      const families = await scrape(service);
      return ["DB", "DB_1"].map((database) => sample(families, "plaudit_d1_queries_total", { caller: "/v1/counts", database }));
    };
    const before = await queries();
    const items = [first, second].map((item) => ({ item_type: "post", item_id: item.split(":")[1] }));
    const res = await call("POST", "/v1/counts", { body: { items, counter_types: ["likes"] } });
    expect((await json(res)).counts).toEqual({ [first]: { likes: 5 }, [second]: { likes: 7 } });
    expect((await queries()).map((n, i) => n - before[i]!)).toEqual([1, 1]);
    // Each database's size, as its writes report it, is watched against D1's limit.
    const families = await scrape(service);
    for (const database of ["DB", "DB_1"]) expect(sample(families, "plaudit_d1_database_bytes", { database })).toBeGreaterThan(0);
  });

  it("converges after a write load over both queues: each object, its D1 database and the central store agree", async () => {
    const sent = async (queue: string) => sample(await scrape(service), "plaudit_queue_messages_total", { queue, event: "sent" });
    const before = [await sent("plaudit-events"), await sent("plaudit-events-1")];
    // Items in both databases and on both queues.
    const items = Array.from({ length: 8 }, (_, i) => itemIn(i % 2, i % 4 < 2 ? 0 : 1));
    const users = await Promise.all(Array.from({ length: 6 }, () => newUser()));
    await Promise.all(
      users.map(async (user, u) => {
        for (const [i, item] of items.entries()) {
          const id = item.split(":")[1]!;
          if ((u + i) % 3 !== 0) expect((await like(user.token, id)).status).toBe(200);
          if ((u + i) % 4 === 0) expect((await unlike(user.token, id)).status).toBe(200);
        }
      }),
    );
    const store = await central();
    for (const item of items) {
      const counts = await settled(item);
      expect((await d1Counts(item))?.counts).toEqual(counts);
      expect((await store.readCounts(item))?.counts).toEqual(counts);
    }
    expect(new Set(items.map((item) => countDatabaseIndex(item, 2)))).toEqual(new Set([0, 1]));
    await expect.poll(async () => (await sent("plaudit-events")) > before[0]! && (await sent("plaudit-events-1")) > before[1]!, { timeout: 20_000 }).toBe(true);
  });
});
