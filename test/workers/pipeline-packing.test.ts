import { describe, expect, it } from "vitest";
import type { EdgeRow } from "../../durable-objects/lib/emission-outbox";
import { packEmission } from "../../durable-objects/lib/emission-pack";
import { MAX_MESSAGE_BYTES } from "../../shared/emissions";
import { freshId } from "./helpers";
import { central, d1Counts, itemStub, settled } from "./pipeline-helpers";

const rows = (n: number): EdgeRow[] =>
  Array.from({ length: n }, (_, i) => ({ user: `1844674407370955${String(i).padStart(4, "0")}`, counter: "likes", state: 1, inc: 1, seq: i + 1, at: 1_700_000_000_000 + i }));

describe("a large emission", () => {
  it("is split into messages under the queue's size limit, each edge in exactly one, the snapshot in the first", () => {
    let id = 0;
    const snapshot = { seq: 9, counts: { likes: 5000, views: 0, shares: 0, saves: 0 } };
    const messages = packEmission({ ns: "ITEM_COUNTER", name: "post:1" }, "post:1", snapshot, rows(5000), () => String(++id));
    expect(messages.length).toBeGreaterThan(1);
    for (const { body } of messages) expect(new TextEncoder().encode(JSON.stringify(body)).length).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
    expect(messages.map(({ body }) => body.snapshot ?? null)).toEqual([snapshot, ...Array(messages.length - 1).fill(null)]);
    expect(messages.flatMap(({ body }) => body.edges.map((edge) => edge[4]))).toEqual(rows(5000).map((row) => row.seq));
    expect(new Set(messages.map(({ body }) => body.emission)).size).toBe(messages.length);
  });

  it("lands whole in both stores when an item applies thousands of changes at once", async () => {
    const item = `post:${freshId()}`;
    const users = Array.from({ length: 3000 }, () => freshId());
    await itemStub(item).apply(users.map((user) => ({ user, counter: "likes", state: 1, inc: 1, seq: 1, at: 1 })));
    // Each edge is two conditional central-store writes (user_likes and item_likes), 16 in flight per batch.
    const counts = await settled(item, 75_000);
    expect(counts.likes).toBe(3000);
    expect((await d1Counts(item))?.counts.likes).toBe(3000);
    const store = await central();
    expect((await store.readCounts(item))?.counts.likes).toBe(3000);
    for (const user of [users[0]!, users[1499]!, users[2999]!]) expect((await store.readEdge(user, item, "likes"))?.state).toBe(1);
  }, 90_000);
});
