import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { freshId } from "./helpers";
import { countDatabaseFor } from "../../workers/stores/count-databases";
import { central, d1Counts, d1Row, deliver, headEmission } from "./pipeline-helpers";

const key = () => `post:${freshId()}`;

describe("the aggregator writes each item's newest snapshot once", () => {
  it("writes the newest of duplicate, reordered and stale snapshots", async () => {
    const item = key();
    const result = await deliver([
      headEmission(item, { seq: 3, counts: { likes: 3 } }),
      headEmission(item, { seq: 5, counts: { likes: 5, saves: 1 } }),
      headEmission(item, { seq: 5, counts: { likes: 5, saves: 1 } }),
      headEmission(item, { seq: 4, counts: { likes: 4 } }),
    ]);
    expect(result).toEqual({ acked: ["m0", "m1", "m2", "m3"], retried: [] });
    expect(await d1Counts(item)).toEqual({ seq: 5, counts: { likes: 5, views: 0, shares: 0, saves: 1 } });
    expect(await (await central()).readCounts(item)).toEqual({ seq: 5, counts: { likes: 5, views: 0, shares: 0, saves: 1 } });
  });

  it("ignores a snapshot older than the stored one in a later batch", async () => {
    const item = key();
    await deliver([headEmission(item, { seq: 7, counts: { likes: 7 } })]);
    const result = await deliver([headEmission(item, { seq: 6, counts: { likes: 6 } })]);
    expect(result.acked).toEqual(["m0"]);
    expect(await d1Counts(item)).toEqual({ seq: 7, counts: { likes: 7, views: 0, shares: 0, saves: 0 } });
    expect((await (await central()).readCounts(item))?.counts.likes).toBe(7);
  });

  it("keeps the newest version of an edge whatever the order of its messages", async () => {
    const item = key();
    const user = freshId();
    await deliver([
      headEmission(item, { edges: [[user, "likes", 0, 1, 4]] }),
      headEmission(item, { edges: [[user, "likes", 1, 1, 3]] }),
      headEmission(item, { edges: [[user, "likes", 1, 1, 1]] }),
    ]);
    expect(await (await central()).readEdge(user, item, "likes")).toEqual({ state: 0, version: 2 ** 32 + 4, liked_at: null });
  });

  it("writes one D1 row per item, with all its counters", async () => {
    const item = key();
    await deliver([headEmission(item, { seq: 1, counts: { likes: 2, views: 9 } })]);
    expect(await d1Row(item)).toMatchObject({ likes: 2, views: 9, shares: 0, saves: 0, seq: 1 });
  });
});

describe("a resent emission", () => {
  it("is acknowledged without writing the stores again when this consumer already wrote it", async () => {
    const item = key();
    const message = headEmission(item, { seq: 3, counts: { likes: 3 } });
    await deliver([message]);
    // Rewind D1's row by hand: only a write from the consumer could bring the count back.
    await countDatabaseFor(env, item).prepare("UPDATE item_counts SET likes = 99, seq = 0 WHERE item_id = ?").bind(item.split(":")[1]).run();
    expect(await deliver([{ ...message, emission: "resent" }])).toEqual({ acked: ["m0"], retried: [] });
    expect((await d1Counts(item))?.counts.likes).toBe(99);
  });
});

describe("a bad message never holds back its batch", () => {
  it("acks the good messages and retries only the poison one", async () => {
    const [a, b] = [key(), key()];
    const result = await deliver([
      headEmission(a, { seq: 1, counts: { likes: 1 } }),
      { v: 1, origin: { ns: "ITEM_COUNTER", name: "post:1" }, item: "not an item" },
      headEmission(b, { seq: 2, counts: { likes: 2 } }),
    ]);
    expect(result).toEqual({ acked: ["m0", "m2"], retried: ["m1"] });
    expect((await d1Counts(a))?.counts.likes).toBe(1);
    expect((await d1Counts(b))?.counts.likes).toBe(2);
  });

  it("retries every message while the central store is down, and lands them when it is back", async () => {
    const item = key();
    const message = headEmission(item, { seq: 1, counts: { likes: 1 }, edges: [[freshId(), "likes", 1, 1, 1]] });
    const down = await deliver([message], { ALTERNATOR_ENDPOINT: "http://127.0.0.1:9" });
    expect(down).toEqual({ acked: [], retried: ["m0"] });
    expect(await (await central()).readCounts(item)).toBeNull();

    expect(await deliver([message])).toEqual({ acked: ["m0"], retried: [] });
    expect((await (await central()).readCounts(item))?.counts.likes).toBe(1);
    expect((await d1Counts(item))?.counts.likes).toBe(1);
  });

  it("writes D1 and acks while the central store is off", async () => {
    const item = key();
    const result = await deliver([headEmission(item, { seq: 1, counts: { likes: 4 } })], { ALTERNATOR_ENDPOINT: "" });
    expect(result.acked).toEqual(["m0"]);
    expect((await d1Counts(item))?.counts.likes).toBe(4);
    expect(await (await central()).readCounts(item)).toBeNull();
  });
});

describe("children of a hot item", () => {
  const child = (item: string, body: Record<string, unknown>) => ({
    ...headEmission(item),
    origin: { ns: "ITEM_SHARD", name: `${item}#3` },
    ...body,
  });

  it("land their edges without touching the item's total", async () => {
    const item = key();
    const user = freshId();
    await deliver([headEmission(item, { seq: 2, counts: { likes: 2 } })]);
    const result = await deliver([child(item, { edges: [[user, "likes", 1, 1, 1]] })]);
    expect(result.acked).toEqual(["m0"]);
    expect(await d1Counts(item)).toEqual({ seq: 2, counts: { likes: 2, views: 0, shares: 0, saves: 0 } });
    expect(await (await central()).readEdge(user, item, "likes")).toEqual({ state: 1, version: 2 ** 32 + 1, liked_at: null });
  });

  it("never overwrite the item's total with their partial counts", async () => {
    const item = key();
    await deliver([headEmission(item, { seq: 2, counts: { likes: 2 } })]);
    const result = await deliver([child(item, { snapshot: { seq: 9, counts: { likes: 1, views: 0, shares: 0, saves: 0 } } })]);
    expect(result.retried).toEqual(["m0"]);
    expect((await d1Counts(item))?.counts.likes).toBe(2);
    expect((await (await central()).readCounts(item))?.counts.likes).toBe(2);
  });
});
