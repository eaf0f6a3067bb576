import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { freshId, like } from "../workers/helpers";
import { HEAD } from "../../shared/placement";
import { SHARDS, child, delivered, handedOver, head, homeOf, likeBelowHotRate, makeHot, settledLikes, users } from "./hot-helpers";
import { hold, release, setHeld } from "../workers/fault-points";
import { rememberPlacement } from "../../durable-objects/lib/placement-cache";

/** Every child of the item, hung or answering again (their adopt calls wait while it is set). */
async function hangAdopts(key: string, hang: boolean): Promise<void> {
  for (let i = 0; i < SHARDS; i++) {
    await runInDurableObject(child(key, i), (instance) => {
      setHeld(instance, "adopt", hang);
    });
  }
}

async function failedReports(key: string): Promise<number> {
  let failed = 0;
  for (let i = 0; i < SHARDS; i++) failed += await runInDurableObject(child(key, i), (instance) => instance.stats.failedReports);
  return failed;
}

// Each waits out OBJECT_CALL_TIMEOUT_MS (5 s) at least once, after making an item hot.
describe("object-to-object calls of a hot item have deadlines", () => {
  it("a child gives up a report its head does not answer, resends it, and the count ends exact", { timeout: 90_000 }, async () => {
    const id = freshId();
    const key = `post:${id}`;
    const wave = await makeHot(id);
    expect(await handedOver(key)).toBe(true);
    expect(await settledLikes(key, wave.length)).toBe(wave.length);

    // The item gets no likes after its wave, and a loaded machine may take
    // long to get here: a head that cooled meanwhile splits again on the
    // hint. From then on nothing may cool it: its alarm (the cooling check)
    // is held, and the shard map is kept in this isolate for the test's
    // length, so the late likes go straight to children and the head, whose
    // reports are held too, commits no batch that could decide to cool.
    const late = await users(8);
    await runInDurableObject(head(key), (instance) => {
      hold(instance, "alarm");
      hold(instance, "report");
    });
    rememberPlacement(key, await head(key).expectHot(), 120_000, Date.now());
    const answers = await Promise.all(late.map((u) => like(u.token, id)));
    expect(answers.every((r) => r.status === 200)).toBe(true);
    expect(await delivered(late.map((u) => u.id))).toBe(true);
    for (const u of late) expect(await homeOf(u.id, key)).not.toBe(HEAD);
    // Without a deadline a hung report never fails: it waits as long as the head does.
    await expect.poll(() => failedReports(key), { timeout: 30_000, interval: 200 }).toBeGreaterThan(0);

    await runInDurableObject(head(key), (instance) => {
      release(instance, "report");
      release(instance, "alarm");
    });
    expect(await settledLikes(key, wave.length + late.length)).toBe(wave.length + late.length);
  });

  it("a hand-over whose children do not answer fails its batch at the deadline, retries it, and moves every edge once", { timeout: 90_000 }, async () => {
    const id = freshId();
    const key = `post:${id}`;
    const early = await users(10);
    await likeBelowHotRate(early, id);
    await hangAdopts(key, true);
    const wave = await makeHot(id);
    await expect.poll(() => runInDurableObject(head(key), (instance) => instance.handover.failures), { timeout: 30_000, interval: 200 }).toBeGreaterThan(0);

    await hangAdopts(key, false);
    expect(await handedOver(key)).toBe(true);
    expect(await settledLikes(key, early.length + wave.length)).toBe(early.length + wave.length);
  });
});
