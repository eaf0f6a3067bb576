import { describe, expect, it } from "vitest";
import { childFor } from "../../shared/placement";
import { freshId, json, like, newUser, unlike } from "../workers/helpers";
import { SHARDS, child, sleep, describeItem, users, makeHot, settledLikes, waitToCool, cooled, homeOf } from "./hot-helpers";

describe("hot items cool", () => {
  it("keeps the count exact through likes before a split, unlikes after it, and unlikes while it cools", async () => {
    const id = freshId();
    const key = `post:${id}`;
    const early = await users(10);
    await Promise.all(early.map((u) => like(u.token, id)));
    const wave = await makeHot(id);
    await Promise.all(early.map((u) => unlike(u.token, id)));
    const late = await users(12);
    await Promise.all(late.map((u) => like(u.token, id)));
    expect(await settledLikes(key, wave.length + late.length)).toBe(wave.length + late.length);
    await waitToCool();
    const answers = await Promise.all(late.map((u) => unlike(u.token, id)));
    expect(answers.map((r) => r.status)).toEqual(late.map(() => 200));
    expect(await settledLikes(key, wave.length)).toBe(wave.length);
    expect(await cooled(key)).toBe(true);
    for (const u of early) expect(await homeOf(u.id, key)).toBe(-1);
  });

  it("counts once a user who likes before a split, unlikes while hot and likes again after it cools", async () => {
    const id = freshId();
    const key = `post:${id}`;
    const fan = await newUser();
    await like(fan.token, id);
    const wave = await makeHot(id);
    expect((await json(await unlike(fan.token, id))).status).toBe("unliked");
    await waitToCool();
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
    expect(await homeOf(late.id, key)).toBe(index);
    expect(await settledLikes(key, wave.length + 1)).toBe(wave.length + 1);
    await waitToCool();
    const redelivered = await child(key, index).apply(key, index, [{ user: late.id, counter: "likes", state: 1, inc: 1, seq: 1 }]);
    expect(redelivered.status).toBe("applied");
    await sleep(300);
    expect(await settledLikes(key, wave.length + 1)).toBe(wave.length + 1);
  });
});
