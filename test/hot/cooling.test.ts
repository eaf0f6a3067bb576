import { describe, expect, it } from "vitest";
import { childFor } from "../../shared/placement";
import { freshId, json, like, newUser, unlike } from "../workers/helpers";
import { runInDurableObject } from "cloudflare:test";
import { SHARDS, child, describeItem, users, makeHot, settledLikes, cooled, homeOf, handedOver, head } from "./hot-helpers";

describe("hot items cool", () => {
  it("keeps the count exact through likes before a split, unlikes after it, and unlikes once it cooled", async () => {
    const id = freshId();
    const key = `post:${id}`;
    const early = await users(10);
    await Promise.all(early.map((u) => like(u.token, id)));
    const wave = await makeHot(id);
    expect(await handedOver(key)).toBe(true);
    await Promise.all(early.map((u) => unlike(u.token, id)));
    const late = await users(12);
    await Promise.all(late.map((u) => like(u.token, id)));
    expect(await settledLikes(key, wave.length + late.length)).toBe(wave.length + late.length);
    expect(await cooled(key)).toBe(true);
    const answers = await Promise.all(late.map((u) => unlike(u.token, id)));
    expect(answers.map((r) => r.status)).toEqual(late.map(() => 200));
    expect(await settledLikes(key, wave.length)).toBe(wave.length);
    expect(await cooled(key)).toBe(true);
    // Handed over to their children at the split, the early likers' edges stay there.
    for (const u of early) expect(await homeOf(u.id, key)).toBe(childFor(u.id, SHARDS));
  });

  it("counts once a user who likes before a split, unlikes while hot and likes again after it cools", async () => {
    const id = freshId();
    const key = `post:${id}`;
    const fan = await newUser();
    await like(fan.token, id);
    const wave = await makeHot(id);
    expect((await json(await unlike(fan.token, id))).status).toBe("unliked");
    expect(await cooled(key)).toBe(true);
    expect((await json(await like(fan.token, id))).status).toBe("liked");
    expect((await describeItem(key)).hot).toBe(false);
    expect(await settledLikes(key, wave.length + 1)).toBe(wave.length + 1);
  });

  it("counts once a change redelivered to a child after the item cooled", async () => {
    const id = freshId();
    const key = `post:${id}`;
    const wave = await makeHot(id);
    const late = await newUser();
    await like(late.token, id);
    const index = childFor(late.id, SHARDS);
    await expect.poll(() => homeOf(late.id, key), { timeout: 10_000 }).toBe(index);
    expect(await settledLikes(key, wave.length + 1)).toBe(wave.length + 1);
    expect(await cooled(key)).toBe(true);
    const redelivered = await child(key, index).apply(key, index, [{ user: late.id, counter: "likes", state: 1, inc: 1, seq: 1, at: 1 }]);
    expect(redelivered.status).toBe("applied");
    // The child commits the redelivery under a new sequence and reports it: wait for the head to hold that report.
    const seq = await runInDurableObject(child(key, index), (_, state) => state.storage.sql.exec<{ seq: number }>("SELECT seq FROM state").one().seq);
    await expect.poll(async () => (await head(key).describe()).children.find((c) => c.index === index)?.seq, { timeout: 10_000 }).toBe(seq);
    expect((await head(key).read()).counts.likes).toBe(wave.length + 1);
  });
});
