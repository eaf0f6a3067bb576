import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ApplyResult } from "../../shared/contracts";
import type { EdgeChange } from "../../shared/edges";
import { call, countOf, freshId, json, like, newUser, tokenFor, unlike } from "./helpers";
import { failNext, failuresLeft } from "./fault-points";
import { MeteredStorage } from "../../durable-objects/lib/metered-storage";
import { UserOutbox } from "../../durable-objects/lib/user-outbox";
import { OUTBOX_SWEEP_MS } from "../../shared/object-windows";

const itemStub = (key: string) => env.ITEM_COUNTER.get(env.ITEM_COUNTER.idFromName(key));
const userStub = (id: string) => env.USER_LIKES.get(env.USER_LIKES.idFromName(`u:${id}`));

/** The item's likes after an apply the head accepted. */
async function likesAfter(result: Promise<ApplyResult>): Promise<number> {
  const outcome = await result;
  if (outcome.status !== "applied" || !outcome.counts) throw new Error(`not applied: ${JSON.stringify(outcome)}`);
  return outcome.counts.likes;
}

const change = (user: string, state: 0 | 1, seq: number, inc = 1): EdgeChange => ({ user, counter: "likes", state, inc, seq, at: seq });

describe("the item side applies each change once, in version order", () => {
  it("ignores the same change delivered twice", async () => {
    const item = itemStub(`post:${freshId()}`);
    expect(await likesAfter(item.apply([change("1", 1, 1)]))).toBe(1);
    expect(await likesAfter(item.apply([change("1", 1, 1)]))).toBe(1);
    expect(await likesAfter(item.apply([change("1", 1, 1), change("1", 1, 1)]))).toBe(1);
  });

  it("ignores an older change delivered after a newer one", async () => {
    const item = itemStub(`post:${freshId()}`);
    await item.apply([change("1", 1, 1)]);
    await item.apply([change("1", 0, 2)]);
    expect(await likesAfter(item.apply([change("1", 1, 1)]))).toBe(0);
    expect((await item.read()).counts.likes).toBe(0);
  });

  it("lets a new incarnation win over every sequence of the old one", async () => {
    const item = itemStub(`post:${freshId()}`);
    await item.apply([change("1", 1, 50)]);
    expect(await likesAfter(item.apply([change("1", 0, 1, 2)]))).toBe(0);
    expect(await likesAfter(item.apply([change("1", 1, 99, 1)]))).toBe(0);
  });

  it("compares a second change of an edge in the same commit with the first one's row, not the row read before it", async () => {
    const item = itemStub(`post:${freshId()}`);
    const commits = () => runInDurableObject(item, (instance) => instance.stats.commits);
    // Sent together, both land in one commit window: one commit for the pair.
    const together = async (first: EdgeChange, second: EdgeChange) => {
      const before = await commits();
      await Promise.all([item.apply([first]), item.apply([second])]);
      expect(await commits()).toBe(before + 1);
    };
    await together(change("1", 1, 1), change("1", 1, 2));
    expect((await item.read()).counts.likes).toBe(1);
    await together(change("2", 1, 1), change("2", 0, 2));
    expect((await item.read()).counts.likes).toBe(1);
    await together(change("3", 0, 2), change("3", 1, 1));
    expect((await item.read()).counts.likes).toBe(1);
  });

  it("never goes negative on an unlike it never saw liked", async () => {
    const item = itemStub(`post:${freshId()}`);
    expect(await likesAfter(item.apply([change("1", 0, 3)]))).toBe(0);
  });

  it("coalesces concurrent applies and counts each user once", async () => {
    const key = `post:${freshId()}`;
    const item = itemStub(key);
    await Promise.all(Array.from({ length: 30 }, (_, i) => item.apply([change(String(i), 1, 1)])));
    await Promise.all(Array.from({ length: 30 }, (_, i) => item.apply([change(String(i), 1, 1)])));
    expect((await item.read()).counts.likes).toBe(30);
    await runInDurableObject(item, (_, state) => {
      const rows = state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM edges WHERE state = 1").one();
      expect(rows.n).toBe(30);
    });
  });
});

describe("an acknowledged like survives an item side that fails", () => {
  it("acknowledges the like, keeps it in the outbox, and the alarm delivers it", async () => {
    const user = await newUser();
    const id = freshId();
    const item = itemStub(`post:${id}`);
    await runInDurableObject(item, (instance) => {
      failNext(instance, "apply", 1);
    });
    const res = await like(user.token, id);
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ status: "liked", count: 1, user_liked: true });
    // The delivery starts after the answer: once the item refused it, the change waits in the outbox.
    await expect.poll(() => runInDurableObject(item, (instance) => failuresLeft(instance, "apply")), { timeout: 10_000, interval: 20 }).toBe(0);
    expect((await item.read()).counts.likes).toBe(0);
    expect(await userStub(user.id).pendingDeliveries()).toBe(1);

    expect(await runDurableObjectAlarm(userStub(user.id))).toBe(true);
    expect((await item.read()).counts.likes).toBe(1);
    expect(await userStub(user.id).pendingDeliveries()).toBe(0);
    await runInDurableObject(userStub(user.id), (_, state) => {
      // The alarm's run stored the acknowledgement: the outbox in the state row is empty.
      expect(state.storage.sql.exec<{ outbox: string }>("SELECT outbox FROM state").one().outbox).toBe("[]");
    });
  });

  it("delivers an edge changed three times while its item side failed, once and with its newest state", async () => {
    const user = await newUser();
    const id = freshId();
    const item = itemStub(`post:${id}`);
    // The item side refuses every delivery until the test lets it recover.
    await runInDurableObject(item, (instance) => {
      failNext(instance, "apply", 1_000);
    });
    for (const answer of [await like(user.token, id), await unlike(user.token, id), await like(user.token, id)]) expect(answer.status).toBe(200);
    // One edge waits, however many times it changed.
    expect(await userStub(user.id).pendingDeliveries()).toBe(1);
    expect((await item.read()).counts.likes).toBe(0);

    await runInDurableObject(item, (instance) => {
      failNext(instance, "apply", 0);
    });
    // Its own retry may run first; either way the alarm delivers it.
    await runDurableObjectAlarm(userStub(user.id));
    await expect.poll(async () => (await item.read()).counts.likes, { timeout: 10_000 }).toBe(1);
    expect(await userStub(user.id).pendingDeliveries()).toBe(0);
    const stored = () =>
      runInDurableObject(userStub(user.id), (_, state) => ({
        outbox: state.storage.sql.exec<{ outbox: string }>("SELECT outbox FROM state").one().outbox,
        edge: state.storage.sql.exec<{ state: number; seq: number }>("SELECT state, seq FROM edges WHERE item = ?", `post:${id}`).one(),
      }));
    await expect.poll(stored, { timeout: 10_000 }).toEqual({ outbox: "[]", edge: { state: 1, seq: 3 } });
  });

  it("keeps re-arming after more than six failures in a row until the change lands", async () => {
    const user = await newUser();
    const id = freshId();
    const item = itemStub(`post:${id}`);
    await runInDurableObject(item, (instance) => {
      failNext(instance, "apply", 8);
    });
    await like(user.token, id);
    // The like's own delivery, begun after its answer, is the first of the 8 refused.
    await expect.poll(() => runInDurableObject(item, (instance) => failuresLeft(instance, "apply")), { timeout: 10_000, interval: 20 }).toBe(7);
    for (let attempt = 0; attempt < 7; attempt++) {
      expect(await runDurableObjectAlarm(userStub(user.id))).toBe(true);
      expect((await item.read()).counts.likes).toBe(0);
    }
    expect(await runDurableObjectAlarm(userStub(user.id))).toBe(true);
    expect((await item.read()).counts.likes).toBe(1);
    expect(await userStub(user.id).pendingDeliveries()).toBe(0);
    expect(await countOf(id)).toBe(1);
  });

  it("brings the alarm forward when a new instance finds its outbox holding a change, as after a crash", async () => {
    const user = await newUser();
    const id = freshId();
    const item = itemStub(`post:${id}`);
    // The item side refuses every delivery until the test lets it recover.
    await runInDurableObject(item, (instance) => {
      failNext(instance, "apply", 1_000);
    });
    expect((await like(user.token, id)).status).toBe(200);
    // The failed delivery asked for a retry a second away; then the instance crashes with its
    // alarm far off (as a sweep or a long backoff leaves it), before that retry could run.
    const retryAsked = () => runInDurableObject(userStub(user.id), async (_, state) => ((await state.storage.getAlarm()) ?? Infinity) <= Date.now() + 2_000);
    await expect.poll(retryAsked, { timeout: 10_000, interval: 20 }).toBe(true);
    await runInDurableObject(userStub(user.id), async (_, state) => {
      await state.storage.setAlarm(Date.now() + 600_000);
      // Stored before the crash: an abort drops writes its output gate still holds.
      await state.storage.sync();
      state.abort("a crash");
    }).catch(() => {});

    expect(await userStub(user.id).pendingDeliveries()).toBe(1);
    await runInDurableObject(item, (instance) => {
      failNext(instance, "apply", 0);
    });
    // Nothing but the new instance's alarm sends the change again, long before the far-off one.
    await expect.poll(async () => (await item.read()).counts.likes, { timeout: 30_000 }).toBe(1);
    await expect.poll(() => userStub(user.id).pendingDeliveries(), { timeout: 10_000 }).toBe(0);
  });

  it("delivers a like and a later unlike that both failed in the right order", async () => {
    const user = await newUser();
    const id = freshId();
    const item = itemStub(`post:${id}`);
    await runInDurableObject(item, (instance) => {
      failNext(instance, "apply", 2);
    });
    await like(user.token, id);
    expect(await json(await unlike(user.token, id))).toMatchObject({ status: "unliked", count: 0 });
    // Both deliveries were sent, after their answers, and refused.
    await expect.poll(() => runInDurableObject(item, (instance) => failuresLeft(instance, "apply")), { timeout: 10_000, interval: 20 }).toBe(0);
    await runDurableObjectAlarm(userStub(user.id));
    expect((await item.read()).counts.likes).toBe(0);
    expect(await userStub(user.id).pendingDeliveries()).toBe(0);
  });
});

describe("delivered marks wait for a commit the user's object makes anyway", () => {
  /** The items the stored outbox lists, and the alarm. */
  const stored = (user: string) =>
    runInDurableObject(userStub(user), async (_, state) => ({
      outbox: (JSON.parse(state.storage.sql.exec<{ outbox: string }>("SELECT outbox FROM state").one().outbox) as [string, string][]).map(([item]) => item),
      alarm: await state.storage.getAlarm(),
    }));

  it("keeps delivered marks in memory through the next like's commit until the sweep's or a repeat's takes them, and the sweep then leaves no alarm", async () => {
    const user = await newUser();
    const [first, second] = [freshId(), freshId()];
    const asked = Date.now();
    expect((await like(user.token, first)).status).toBe(200);
    await expect.poll(() => userStub(user.id).pendingDeliveries(), { timeout: 10_000 }).toBe(0);
    // Delivered, still listed: no commit of its own, and the burst's sweep set by the like's commit.
    const delivered = await stored(user.id);
    expect(delivered.outbox).toEqual([`post:${first}`]);
    expect(delivered.alarm).toBeGreaterThanOrEqual(asked + OUTBOX_SWEEP_MS);
    // The sweep is put off so that it cannot run before the test runs it, however slow the machine.
    const putOff = Date.now() + 600_000;
    await runInDurableObject(userStub(user.id), (_, state) => state.storage.setAlarm(putOff));
    expect((await like(user.token, second)).status).toBe(200);
    // The second like's commit only added its edge: the first one's mark still waits, and the burst's sweep is left alone.
    expect(await stored(user.id)).toEqual({ outbox: [`post:${first}`, `post:${second}`], alarm: putOff });
    await expect.poll(() => userStub(user.id).pendingDeliveries(), { timeout: 10_000 }).toBe(0);
    expect(await runDurableObjectAlarm(userStub(user.id))).toBe(true);
    expect(await stored(user.id)).toEqual({ outbox: [], alarm: null });
    // A repeat, whose commit is made anyway (I6), takes the marks waiting then.
    const third = freshId();
    expect((await like(user.token, third)).status).toBe(200);
    await runInDurableObject(userStub(user.id), (_, state) => state.storage.setAlarm(putOff));
    await expect.poll(() => userStub(user.id).pendingDeliveries(), { timeout: 10_000 }).toBe(0);
    expect((await stored(user.id)).outbox).toEqual([`post:${third}`]);
    expect(await json(await like(user.token, third))).toMatchObject({ status: "already_liked" });
    expect((await stored(user.id)).outbox).toEqual([]);
  });

  it("costs an eviction before the sweep only a redelivery, which the item side does not count again", async () => {
    const user = await newUser();
    const id = freshId();
    expect((await like(user.token, id)).status).toBe(200);
    await expect.poll(() => userStub(user.id).pendingDeliveries(), { timeout: 10_000 }).toBe(0);
    await runInDurableObject(userStub(user.id), (_, state) => state.abort("an eviction")).catch(() => {});
    // The new instance knows no mark: the listed edge waits again, and its alarm sends it.
    expect(await userStub(user.id).pendingDeliveries()).toBe(1);
    await expect.poll(() => stored(user.id), { timeout: 20_000 }).toEqual({ outbox: [], alarm: null });
    expect((await itemStub(`post:${id}`).read()).counts.likes).toBe(1);
    expect(await countOf(id)).toBe(1);
  });
});

describe("has_liked", () => {
  it("answers exactly from the user's own likes", async () => {
    const user = await newUser();
    const [a, b, c] = [freshId(), freshId(), freshId()];
    await like(user.token, a);
    await like(user.token, b);
    await unlike(user.token, b);
    await like(user.token, c, "reel");
    const res = await call("POST", "/v1/has_liked", { token: user.token, body: { item_ids: [a, b, c, a], item_type: "post" } });
    expect(await json(res)).toEqual({ liked: { [a]: true, [b]: false, [c]: false } });
  });

  it("answers false for a user who never liked anything, without creating storage", async () => {
    const user = await newUser();
    const res = await call("POST", "/v1/has_liked", { token: user.token, body: { item_ids: ["1"], item_type: "post" } });
    expect(await json(res)).toEqual({ liked: { "1": false } });
    await runInDurableObject(userStub(user.id), (_, state) => {
      expect(state.storage.sql.exec("SELECT name FROM sqlite_master").toArray()).toEqual([]);
    });
  });
});

describe("rate limits", () => {
  it("answers likes past the 30 a minute with 429 and Retry-After, and they do not count", async () => {
    const user = await newUser();
    const items = Array.from({ length: 40 }, () => freshId());
    const started = Date.now();
    const answers = await Promise.all(items.map((item) => like(user.token, item)));
    // The bucket holds 30 and refills one every 2 s: a slow machine may earn a few more.
    const earned = Math.floor((Date.now() - started) / 2_000);
    const accepted = answers.filter((r) => r.status === 200).length;
    expect(accepted).toBeGreaterThanOrEqual(30);
    expect(accepted).toBeLessThanOrEqual(30 + earned);
    const refused = answers.map((r, i) => ({ r, item: items[i]! })).filter(({ r }) => r.status === 429);
    expect(refused.length).toBe(40 - accepted);
    const body = await json(refused[0]!.r);
    expect(body.error).toBe("rate_limited");
    expect(body.retry_after).toBeGreaterThan(0);
    expect(refused[0]!.r.headers.get("retry-after")).toBe(String(body.retry_after));
    for (const { item } of refused) expect(await countOf(item)).toBe(0);
  });

  it("counts already_liked and not_liked against the limit", async () => {
    const user = await newUser();
    const item = freshId();
    await like(user.token, item);
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 39 }, (_, i) => (i % 2 === 0 ? like(user.token, item) : unlike(user.token, freshId()))),
    );
    const earned = Math.floor((Date.now() - started) / 2_000);
    const accepted = answers.filter((r) => r.status === 200).length;
    expect(accepted).toBeGreaterThanOrEqual(29);
    expect(accepted).toBeLessThanOrEqual(29 + earned);
    expect(answers.some((r) => r.status === 429)).toBe(true);
  });

  it("does not count requests rejected before the user's object", async () => {
    const user = await newUser();
    for (let i = 0; i < 40; i++) {
      const res = await call("POST", "/v1/like", { token: user.token, body: { item_id: "007", item_type: "post" } });
      expect(res.status).toBe(400);
    }
    expect((await like(user.token, freshId())).status).toBe(200);
  });
});

describe("admin", () => {
  it("answers 403 to a user token and 200 to a service token", async () => {
    const user = await newUser();
    expect((await call("GET", `/v1/admin/users/${user.id}`, { token: user.token })).status).toBe(403);
    const service = await tokenFor(freshId(), { role: "service" });
    const res = await call("GET", `/v1/admin/users/${user.id}`, { token: service });
    expect(await json(res)).toMatchObject({ user_id: user.id, pending_deliveries: 0 });
  });
});

describe("the outbox list kept in memory", () => {
  it("follows a commit that holds, and is read again after one that rolls back", async () => {
    const user = await newUser();
    const id = freshId();
    await runInDurableObject(itemStub(`post:${id}`), (instance) => {
      failNext(instance, "apply", 1);
    });
    expect((await like(user.token, id)).status).toBe(200);
    await runInDurableObject(userStub(user.id), (_, state) => {
      const storage = new MeteredStorage(state.storage, "user_likes", () => undefined);
      const outbox = new UserOutbox(storage);
      const listed = () => outbox.stored().map((edge) => edge.item);
      const write = (item: string) => storage.sql.exec("UPDATE state SET outbox = ?", outbox.next([{ item, counter: "likes" }], Date.now(), null));
      expect(listed()).toEqual([`post:${id}`]);
      // Kept between writes: the second read is the list the first parsed, not the row again.
      expect(outbox.stored()).toBe(outbox.stored());
      expect(() =>
        storage.commit(() => {
          write("post:rolled-back");
          expect(listed()).toEqual([`post:${id}`, "post:rolled-back"]);
          throw new Error("the commit fails");
        }),
      ).toThrow("the commit fails");
      expect(listed()).toEqual([`post:${id}`]);
      storage.commit(() => write("post:kept"));
      const row = state.storage.sql.exec<{ outbox: string }>("SELECT outbox FROM state").one().outbox;
      expect(listed()).toEqual((JSON.parse(row) as [string, string][]).map(([item]) => item));
    });
  });

  it("leaves acknowledged edges listed in a change's commit while the list is short and the sweep near, and takes them out once it would pass 100 or the sweep is far", async () => {
    const user = await newUser();
    expect((await like(user.token, freshId())).status).toBe(200);
    await expect.poll(() => userStub(user.id).pendingDeliveries(), { timeout: 10_000 }).toBe(0);
    // The sweep stores the like's mark: the list starts empty.
    await runDurableObjectAlarm(userStub(user.id));
    await runInDurableObject(userStub(user.id), (_, state) => {
      const storage = new MeteredStorage(state.storage, "user_likes", () => undefined);
      const outbox = new UserOutbox(storage);
      expect(outbox.stored()).toEqual([]);
      const prefix = `post:${freshId()}-`;
      const edges = Array.from({ length: 101 }, (_, i) => ({ item: `${prefix}${i}`, counter: "likes" as const }));
      for (const [i, edge] of edges.entries()) storage.sql.exec("INSERT INTO edges (item, counter, state, inc, seq) VALUES (?, ?, 1, 1, ?)", edge.item, edge.counter, 1_000 + i);
      const write = (changed: typeof edges, sweepAt: number | null = null) =>
        storage.commit(() => storage.sql.exec("UPDATE state SET outbox = ?", outbox.next(changed, Date.now(), sweepAt)));
      const listedInRow = () => (JSON.parse(state.storage.sql.exec<{ outbox: string }>("SELECT outbox FROM state").one().outbox) as [string, string][]).map(([item]) => item);
      write(edges.slice(0, 99));
      for (const [i, edge] of edges.slice(0, 98).entries()) outbox.delivered(edge, { inc: 1, seq: 1_000 + i });
      // 100 listed: the acknowledged edges stay, their marks in memory.
      write([edges[99]!]);
      expect(listedInRow()).toEqual(edges.slice(0, 100).map((edge) => edge.item));
      expect(outbox.undelivered()).toEqual([edges[98], edges[99]]);
      // A list that would pass 100 is swept by the change's own commit.
      write([edges[100]!]);
      expect(listedInRow()).toEqual([edges[98]!.item, edges[99]!.item, edges[100]!.item]);
      expect(outbox.stored()).toEqual([edges[98], edges[99], edges[100]]);
      // So is a short list when the sweep is not due within OUTBOX_SWEEP_MS (an alarm a failed delivery's backoff holds later).
      outbox.delivered(edges[98]!, { inc: 1, seq: 1_098 });
      write([], Date.now() + OUTBOX_SWEEP_MS - 1_000);
      expect(listedInRow()).toEqual([edges[98]!.item, edges[99]!.item, edges[100]!.item]);
      write([], Date.now() + OUTBOX_SWEEP_MS + 60_000);
      expect(listedInRow()).toEqual([edges[99]!.item, edges[100]!.item]);
    });
  });

  it("tells the undelivered edges of a long list in one read, an item's like and save apart", async () => {
    const user = await newUser();
    expect((await like(user.token, freshId())).status).toBe(200);
    await runInDurableObject(userStub(user.id), (_, state) => {
      const storage = new MeteredStorage(state.storage, "user_likes", () => undefined);
      const outbox = new UserOutbox(storage);
      const prefix = `post:${freshId()}-`;
      const edges = Array.from({ length: 230 }, (_, i) => ({ item: `${prefix}${Math.floor(i / 2)}`, counter: i % 2 === 0 ? ("likes" as const) : ("saves" as const) }));
      for (const [i, edge] of edges.entries()) {
        // One listed edge has no row: dropped since it was listed.
        if (i === 151) continue;
        storage.sql.exec("INSERT INTO edges (item, counter, state, inc, seq) VALUES (?, ?, 1, 1, ?)", edge.item, edge.counter, 1_000 + i);
      }
      // The user's like, whose delivered mark waits in the object's own memory for the sweep, is listed still.
      const earlier = outbox.undelivered();
      storage.commit(() => storage.sql.exec("UPDATE state SET outbox = ?", outbox.next(edges, Date.now(), null)));
      // Every third edge acknowledged at its stored version; edge 2 at an older one, which leaves it due.
      for (const [i, edge] of edges.entries()) if (i % 3 === 0) outbox.delivered(edge, { inc: 1, seq: 1_000 + i });
      outbox.delivered(edges[2]!, { inc: 1, seq: 1 });
      const expected = [...earlier, ...edges.filter((_, i) => i % 3 !== 0 && i !== 151)];
      const exec = storage.sql.exec;
      let statements = 0;
      storage.sql.exec = ((...args: Parameters<typeof exec>) => (statements++, exec(...args))) as typeof exec;
      expect(outbox.undelivered()).toEqual(expected);
      // One statement, whatever the list holds.
      expect(statements).toBe(1);
      storage.sql.exec = exec;
      expect(outbox.due(edges[2]!)).toMatchObject({ seq: 1_002 });
      expect(outbox.due(edges[3]!)).toBeNull();
      expect(outbox.due(edges[151]!)).toBeNull();
      // The sweep's write of the list keeps exactly those.
      storage.commit(() => storage.sql.exec("UPDATE state SET outbox = ?", outbox.swept()));
      expect(outbox.stored()).toEqual(expected);
    });
  });
});
