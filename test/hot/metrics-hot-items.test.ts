import { beforeAll, describe, expect, it } from "vitest";
import { freshId, tokenFor } from "../workers/helpers";
import { dashboardData, sample, scrape } from "../workers/metrics-exposition";
import { makeHot, SHARDS } from "./hot-helpers";

let service: string;

beforeAll(async () => {
  service = await tokenFor(freshId(), { role: "service" });
});

const hotItems = async () => (await dashboardData(service)).hot_items;

describe("hot items in the metrics", () => {
  it("lists an item that turned hot, with its shard count, and counts the split", async () => {
    const before = sample(await scrape(service), "plaudit_shard_splits_total");
    const id = freshId();
    await makeHot(id);
    await expect.poll(hotItems, { timeout: 10_000 }).toContainEqual(expect.objectContaining({ item: `post:${id}`, shards: SHARDS }));
    expect(sample(await scrape(service), "plaudit_shard_splits_total") - before).toBe(1);
  });

});
