import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { config } from "../../shared/config";
import type { ReshardResponse } from "../../shared/reshard";
import { RESHARD_TEST_MS, expectAgreement, feedReads, reshard, seedLoad, underLoad } from "./reshard-load";

describe("npm run reshard, from the default layout to four databases, under a feed and a write load", () => {
  it("never reads a counted item as zero, loses no write, keeps a feed within 2 store round trips, and leaves every store agreeing", async () => {
    expect(config(env).COUNT_DATABASES).toBe(1);
    const load = await seedLoad();
    const steps: ReshardResponse[] = [];
    const before = await feedReads(load);
    const tally = await underLoad(load, async () => {
      const done = await reshard(load, 4, undefined, (step) => steps.push(step));
      expect(done).toMatchObject({ from: 4, to: 4, phase: "done" });
    });
    // Every phase ran, in order, and the feed load met the reshard in each of them.
    const phases = [...new Set(steps.map((step) => step.phase))];
    expect(phases).toEqual(["dual", "copy", "switch", "cleanup", "done"]);
    expect(tally.feeds).toBeGreaterThan(phases.length);
    const rows = steps.find((step) => step.phase === "copy")!.total;
    expect(rows).toBeGreaterThanOrEqual(load.keys.length);
    expect(steps.reduce((sum, step) => sum + (step.phase === "copy" ? step.moved : 0), 0)).toBeGreaterThan(0);

    await expectAgreement(load, 4);
    const after = await feedReads(load);
    expect(after.reads - before.reads).toBeGreaterThanOrEqual(tally.feeds);
    expect(after.overBound).toBe(before.overBound);
    // Spread over four databases (and over both layouts while the copy runs), feeds read the central store.
    expect(after.central).toBeGreaterThan(before.central);

    // Run again, it changes nothing: the layout is already the one asked for.
    expect(await reshard(load, 4)).toMatchObject({ phase: "done", steps: 1 });
  }, RESHARD_TEST_MS);
});
