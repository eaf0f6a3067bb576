import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { RecheckRequest } from "../../shared/emissions";
import { countDatabaseFor } from "../../workers/stores/count-databases";
import { splitItem } from "../../workers/stores/item-key";
import { freshId, like, newUser } from "./helpers";
import { d1Counts, deliver, headEmission, settled } from "./pipeline-helpers";

const WAIT = { timeout: 20_000, interval: 100 };
const recheck = (item: string): RecheckRequest => ({ v: 1, kind: "recheck", item });

describe("the events queue's recheck requests", () => {
  it("compares the item's stores with its object, repairs a drifted D1 row and acks the request", async () => {
    const id = freshId();
    const item = `post:${id}`;
    for (let i = 0; i < 2; i++) expect((await like((await newUser()).token, id)).status).toBe(200);
    await expect.poll(async () => (await settled(item)).likes, WAIT).toBe(2);
    await expect.poll(async () => (await d1Counts(item))?.counts.likes, WAIT).toBe(2);
    const { seq } = (await d1Counts(item))!;
    const [type, itemId] = splitItem(item);
    await countDatabaseFor(env, item).prepare("UPDATE item_counts SET likes = likes + 7 WHERE item_type = ? AND item_id = ?").bind(type, itemId).run();

    expect(await deliver([recheck(item)])).toEqual({ acked: ["m0"], retried: [] });
    await expect.poll(async () => (await d1Counts(item))?.counts.likes, WAIT).toBe(2);
    expect((await d1Counts(item))!.seq).toBeGreaterThan(seq);
  }, 60_000);

  it("leaves a batch's emissions to the aggregator, and an unknown message is still retried alone", async () => {
    const written = `post:${freshId()}`;
    const batch = [headEmission(written, { seq: 1, counts: { likes: 3 } }), recheck(`post:${freshId()}`), { ...recheck("post:1"), item: "not an item" }];
    expect(await deliver(batch)).toEqual({ acked: ["m0", "m1"], retried: ["m2"] });
    expect((await d1Counts(written))?.counts.likes).toBe(3);
  });
});
