import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { freshId, like } from "../workers/helpers";
import { HEAD } from "../../shared/placement";
import { SHARDS, child, delivered, handedOver, head, homeOf, likeBelowHotRate, makeHot, settledLikes, users } from "./hot-helpers";
import { hold, release, setHeld } from "../workers/fault-points";

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

    // The head's alarm runs its cooling check, and the item stops getting
    // likes after its wave: held, the alarm keeps the item hot however long a
    // loaded machine takes to get here. A head that cooled already splits
    // again on the hint, so the late likes find children to land on.
    await runInDurableObject(head(key), (instance) => {
      hold(instance, "alarm");
      hold(instance, "report");
    });
    expect((await head(key).expectHot()).hot).toBe(true);
    const late = await users(8);
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
