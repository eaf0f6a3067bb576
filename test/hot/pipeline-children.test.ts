import { describe, expect, it } from "vitest";
import { freshId, like } from "../workers/helpers";
import { central, d1Counts, settled } from "../workers/pipeline-helpers";
import { makeHot, settledLikes, users } from "./hot-helpers";

describe("a hot item's pipeline", () => {
  it("lands the head's total in D1 and the central store, and the children's edges in the central store", async () => {
    const id = freshId();
    const key = `post:${id}`;
    const before = await makeHot(id);
    const after = await users(24);
    await Promise.all(after.map((u) => like(u.token, id)));
    const total = before.length + after.length;
    expect(await settledLikes(key, total)).toBe(total);

    const counts = await settled(key);
    expect(counts.likes).toBe(total);
    expect((await d1Counts(key))?.counts.likes).toBe(total);
    const store = await central();
    expect((await store.readCounts(key))?.counts.likes).toBe(total);
    await expect
      .poll(async () => (await Promise.all(after.map((u) => store.readEdge(u.id, key, "likes")))).map((edge) => edge?.state), {
        timeout: 20_000,
        interval: 200,
      })
      .toEqual(after.map(() => 1));
  }, 60_000);
});
