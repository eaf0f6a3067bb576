import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { freshId } from "../workers/helpers";
import { SETTLE_MS, cooled, delivered, describeItem, handedOver, head, keepHot, makeHot, settledLikes } from "./hot-helpers";

describe("a hot item whose objects are evicted", () => {
  it("still cools, from its stored split time, and then keeps no alarm", async () => {
    const id = freshId();
    expect(await delivered((await makeHot(id)).map((u) => u.id))).toBe(true);
    const key = `post:${id}`;
    await abortAllDurableObjects();
    expect((await describeItem(key)).hot).toBe(true);
    expect(await cooled(key)).toBe(true);
    // The merge's emissions are still to be sent, acknowledged and stored by the head's ack sweep 8 s (ACK_SWEEP_MS)
    // on, after a restarted head's resend of what the abort cut off: on a loaded machine that chain passes 15 s.
    await expect
      .poll(() => runInDurableObject(head(key), (_, state) => state.storage.getAlarm()), { timeout: SETTLE_MS, interval: 200 })
      .toBeNull();
  });

  it("does not cool, when started again, before the earliest time the writes it stored allow", async () => {
    const id = freshId();
    const key = `post:${id}`;
    const wave = await makeHot(id);
    // Writes keep the item hot until the restart; refused, they change no state the head would write.
    const stop = keepHot(key);
    expect(await delivered(wave.map((u) => u.id))).toBe(true);
    expect(await handedOver(key)).toBe(true);
    expect(await settledLikes(key, wave.length)).toBe(wave.length);
    const coolsAtOf = () => runInDurableObject(head(key), (_, state) => state.storage.sql.exec<{ cools_at: number }>("SELECT cools_at FROM state").one().cools_at);
    // The wave's writes held the item hot: the head stored how long that lasts.
    expect(await coolsAtOf()).toBeGreaterThan(0);
    // As a busy item's would be after a restart: its writes hold it hot a while yet, and the new instance has seen none of them.
    const coolsAt = Date.now() + 5_000;
    await runInDurableObject(head(key), (_, state) => state.storage.sql.exec("UPDATE state SET cools_at = ?", coolsAt));
    expect(await stop()).toEqual([]);
    await abortAllDurableObjects();
    expect(await coolsAtOf()).toBe(coolsAt);
    expect((await describeItem(key)).hot).toBe(true);
    expect(await cooled(key)).toBe(true);
    expect(Date.now()).toBeGreaterThanOrEqual(coolsAt);
  });
});
