import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { childFor } from "../../shared/placement";
import { handoverStopped, stopHandover } from "../workers/fault-points";
import { freshId, like, unlike } from "../workers/helpers";
import { SHARDS, delivered, handedOver, head, headEdges, homeOf, likeBelowHotRate, makeHot, settledLikes, users } from "./hot-helpers";

describe("a split hands the head's edges over to its children", () => {
  it("moves every edge once, keeps the count exact, and leaves the head at most 1/N of the writes plus refusals", async () => {
    const id = freshId();
    const key = `post:${id}`;
    const early = await users(15);
    await likeBelowHotRate(early, id);
    expect((await headEdges(key)).held).toBe(early.length);
    const wave = await makeHot(id);
    expect(await handedOver(key)).toBe(true);
    expect((await headEdges(key)).moved).toBeGreaterThanOrEqual(early.length);
    expect(await settledLikes(key, early.length + wave.length)).toBe(early.length + wave.length);

    const start = await runInDurableObject(head(key), (instance) => ({ ...instance.stats }));
    const late = await users(20);
    await Promise.all([...early.map((u) => unlike(u.token, id)), ...late.map((u) => like(u.token, id))]);
    expect(await delivered([...early, ...late].map((u) => u.id))).toBe(true);
    const end = await runInDurableObject(head(key), (instance) => ({ ...instance.stats }));
    const writes = early.length + late.length;
    expect(end.applies - start.applies - (end.refused - start.refused)).toBeLessThanOrEqual(writes / SHARDS);
    expect(await settledLikes(key, wave.length + late.length)).toBe(wave.length + late.length);
    for (const u of early) expect(await homeOf(u.id, key)).toBe(childFor(u.id, SHARDS));
  });

  it.each(["mark", "adopt"] as const)("resumes a hand-over cut off after its %s step and counts every edge once", async (step) => {
    const id = freshId();
    const key = `post:${id}`;
    await runInDurableObject(head(key), (instance) => {
      stopHandover(instance.handover, step);
    });
    const early = await users(10);
    await likeBelowHotRate(early, id);
    const wave = await makeHot(id);
    await expect.poll(() => runInDurableObject(head(key), (instance) => handoverStopped(instance.handover)), { timeout: 10_000 }).toBe(true);
    expect((await headEdges(key)).handing).toBe(true);
    expect(await delivered(wave.map((u) => u.id))).toBe(true);

    // Every object loses its memory, as in a crash; the stored batch is all that is left of the hand-over.
    await abortAllDurableObjects();
    expect(await settledLikes(key, early.length + wave.length)).toBe(early.length + wave.length);
    expect(await handedOver(key)).toBe(true);
    expect(await settledLikes(key, early.length + wave.length)).toBe(early.length + wave.length);

    await Promise.all(early.map((u) => unlike(u.token, id)));
    expect(await delivered(early.map((u) => u.id))).toBe(true);
    expect(await settledLikes(key, wave.length)).toBe(wave.length);
  });
});
