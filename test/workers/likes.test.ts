import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { countOf, json, like, newUser, freshId, unlike, call } from "./helpers";

const DAY_INTERVAL_MS = 86_400_000 / 1_000;

describe("like and unlike", () => {
  it("likes, then answers already_liked without counting again", async () => {
    const user = await newUser();
    const item = freshId();
    const first = await like(user.token, item);
    expect(first.status).toBe(200);
    expect(await json(first)).toEqual({ status: "liked", count: 1, count_formatted: "1", user_liked: true });
    const second = await like(user.token, item);
    expect(await json(second)).toEqual({ status: "already_liked", count: 1, count_formatted: "1", user_liked: true });
    expect(await countOf(item)).toBe(1);
  });

  it("keeps a repeated request's use of the limits for the user's next change instead of a write of its own, and loses none of it", async () => {
    const user = await newUser();
    const item = freshId();
    const userStub = env.USER_LIKES.get(env.USER_LIKES.idFromName(`u:${user.id}`));
    const stored = () =>
      runInDurableObject(userStub, (_, state) => {
        const row = state.storage.sql.exec<{ tats: string; outbox: string }>("SELECT tats, outbox FROM state").one();
        const actedAt = state.storage.sql.exec<{ acted_at: number }>("SELECT acted_at FROM edges WHERE item = ?", `post:${item}`).one().acted_at;
        return { day: (JSON.parse(row.tats) as Record<string, number>)["likes:day"]!, outboxEmpty: row.outbox === "[]", actedAt };
      });
    expect((await json(await like(user.token, item))).status).toBe("liked");
    // Once the sweep has stored the delivered mark, a repeat has nothing to fold in.
    await expect.poll(() => userStub.pendingDeliveries(), { timeout: 10_000 }).toBe(0);
    await runDurableObjectAlarm(userStub);
    expect((await stored()).outboxEmpty).toBe(true);
    const first = await stored();
    expect((await json(await like(user.token, item))).status).toBe("already_liked");
    const repeated = await stored();
    // The repeat's time is stored (a late intent from before it must not undo it, I6); the limiter row is not rewritten.
    expect(repeated.actedAt).toBeGreaterThan(first.actedAt);
    expect(repeated.day).toBe(first.day);
    expect((await json(await like(user.token, freshId()))).status).toBe("liked");
    // The next change stores both requests' use of the day's bucket (one interval each).
    expect((await stored()).day).toBe(first.day + 2 * DAY_INTERVAL_MS);
  });

  it("unlikes, then answers not_liked with a count that never goes below zero", async () => {
    const user = await newUser();
    const item = freshId();
    await like(user.token, item);
    expect(await json(await unlike(user.token, item))).toEqual({
      status: "unliked",
      count: 0,
      count_formatted: "0",
      user_liked: false,
    });
    expect(await json(await unlike(user.token, item))).toEqual({
      status: "not_liked",
      count: 0,
      count_formatted: "0",
      user_liked: false,
    });
    expect(await countOf(item)).toBe(0);
  });

  it("counts one like from 20 concurrent likes by one user", async () => {
    const user = await newUser();
    const item = freshId();
    const answers = await Promise.all(Array.from({ length: 20 }, () => like(user.token, item).then((r) => json(r))));
    expect(answers.filter((a) => a.status === "liked")).toHaveLength(1);
    expect(answers.filter((a) => a.status === "already_liked")).toHaveLength(19);
    expect(await countOf(item)).toBe(1);
  });

  it("counts 40 users liking one item at once as 40", async () => {
    const item = freshId();
    const users = await Promise.all(Array.from({ length: 40 }, () => newUser()));
    const answers = await Promise.all(users.map((u) => like(u.token, item).then((r) => json(r))));
    expect(answers.every((a) => a.status === "liked")).toBe(true);
    expect(Math.max(...answers.map((a) => a.count))).toBe(40);
    expect(await countOf(item)).toBe(40);
  });

  it("keeps post:7 and reel:7 apart", async () => {
    const user = await newUser();
    const id = freshId();
    await like(user.token, id, "post");
    expect(await countOf(id, "post")).toBe(1);
    expect(await countOf(id, "reel")).toBe(0);
  });

  it("reaches the same item for the JSON number 7 and the string \"7\"", async () => {
    const user = await newUser();
    const numeric = Number(freshId().slice(-9));
    const first = await call("POST", "/v1/like", { token: user.token, body: { item_id: numeric, item_type: "comment" } });
    expect((await json(first)).status).toBe("liked");
    const second = await like(user.token, String(numeric), "comment");
    expect((await json(second)).status).toBe("already_liked");
  });

  it("ignores a user_id in the body: the user comes from the token", async () => {
    const user = await newUser();
    const other = await newUser();
    const item = freshId();
    await call("POST", "/v1/like", { token: user.token, body: { item_id: item, item_type: "post", user_id: other.id } });
    const mine = await json(await call("POST", "/v1/has_liked", { token: user.token, body: { item_ids: [item], item_type: "post" } }));
    const theirs = await json(await call("POST", "/v1/has_liked", { token: other.token, body: { item_ids: [item], item_type: "post" } }));
    expect(mine.liked[item]).toBe(true);
    expect(theirs.liked[item]).toBe(false);
  });
});
