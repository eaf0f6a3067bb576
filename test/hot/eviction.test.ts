import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { freshId } from "../workers/helpers";
import { cooled, delivered, describeItem, head, makeHot } from "./hot-helpers";

describe("a hot item whose objects are evicted", () => {
  it("still cools, from its stored split time, and then keeps no alarm", async () => {
    const id = freshId();
    expect(await delivered((await makeHot(id)).map((u) => u.id))).toBe(true);
    const key = `post:${id}`;
    await abortAllDurableObjects();
    expect((await describeItem(key)).hot).toBe(true);
    expect(await cooled(key)).toBe(true);
    await expect
      .poll(() => runInDurableObject(head(key), (_, state) => state.storage.getAlarm()), { timeout: 15_000, interval: 200 })
      .toBeNull();
  });
});
