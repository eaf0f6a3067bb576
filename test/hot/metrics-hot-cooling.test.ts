import { beforeAll, describe, expect, it } from "vitest";
import { freshId, tokenFor } from "../workers/helpers";
import { dashboardData, sample, scrape } from "../workers/metrics-exposition";
import { cooled, makeHot } from "./hot-helpers";

// A file of its own: storage is per file, so this item's merge is the only one counted here.
let service: string;

beforeAll(async () => {
  service = await tokenFor(freshId(), { role: "service" });
});

const hotItems = async () => (await dashboardData(service)).hot_items;

describe("cooled items in the metrics", () => {
  it("drops an item from the list once it has cooled, and counts the merge", async () => {
    const id = freshId();
    await makeHot(id);
    const before = sample(await scrape(service), "plaudit_shard_merges_total");
    expect(await cooled(`post:${id}`)).toBe(true);
    await expect.poll(async () => (await hotItems()).map((h) => h.item), { timeout: 10_000 }).not.toContain(`post:${id}`);
    expect(sample(await scrape(service), "plaudit_shard_merges_total") - before).toBe(1);
  });
});
