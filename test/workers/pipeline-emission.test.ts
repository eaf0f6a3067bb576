import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ItemCounter } from "../../durable-objects/ItemCounter";
import { ACK_SWEEP_MS, EMIT_INTERVAL_MS } from "../../shared/object-windows";
import { emitterSends } from "./fault-points";
import { countOf, freshId, like, newUser, unlike } from "./helpers";
import { central, d1Counts, deliver, itemStub, settled } from "./pipeline-helpers";

/** An item liked once, whose emission was sent and kept, not delivered: no acknowledgement comes unless the test delivers it. */
async function likedWithEmissionKept() {
  const id = freshId();
  const key = `post:${id}`;
  const item = itemStub(key);
  await runInDurableObject(item, (instance) => {
    emitterSends(instance.emitter).diverts = 1;
  });
  const asked = Date.now();
  expect((await like((await newUser()).token, id)).status).toBe(200);
  await expect.poll(() => runInDurableObject(item, (instance) => emitterSends(instance.emitter).diverted.length), { timeout: 10_000 }).toBe(1);
  return { key, item, asked };
}

describe("items emit their counts and edges until the stores have them", () => {
  it("ends a burst of likes and unlikes with the objects' counts and edges in D1 and the central store", async () => {
    const items = [freshId(), freshId(), freshId()];
    const users = await Promise.all(Array.from({ length: 8 }, () => newUser()));
    await Promise.all(
      users.flatMap((user, u) =>
        items.map(async (item, i) => {
          await like(user.token, item);
          if ((u + i) % 3 === 0) await unlike(user.token, item);
        }),
      ),
    );
    const store = await central();
    for (const [i, id] of items.entries()) {
      const item = `post:${id}`;
      const counts = await settled(item);
      expect(counts.likes).toBe(users.filter((_, u) => (u + i) % 3 !== 0).length);
      expect((await d1Counts(item))?.counts).toEqual(counts);
      expect((await store.readCounts(item))?.counts).toEqual(counts);
      for (const [u, user] of users.entries()) {
        expect((await store.readEdge(user.id, item, "likes"))?.state).toBe((u + i) % 3 === 0 ? 0 : 1);
      }
    }
  }, 60_000);

  it("resends an emission whose message was lost, and it lands", async () => {
    const id = freshId();
    const item = itemStub(`post:${id}`);
    await runInDurableObject(item, (instance) => {
      emitterSends(instance.emitter).drops = 1;
      instance.emitter.resendAfterMs = 300;
    });
    const user = await newUser();
    expect((await like(user.token, id)).status).toBe(200);
    await settled(`post:${id}`);
    expect(await runInDurableObject(item, (instance) => emitterSends(instance.emitter).drops)).toBe(0);
    expect((await d1Counts(`post:${id}`))?.counts.likes).toBe(1);
    expect((await (await central()).readEdge(user.id, `post:${id}`, "likes"))?.state).toBe(1);
  }, 60_000);

  it("keeps likes and reads working while the queue is down, and lands the counts when it is back", async () => {
    const id = freshId();
    const item = itemStub(`post:${id}`);
    await runInDurableObject(item, (instance) => {
      emitterSends(instance.emitter).failures = 1;
    });
    const user = await newUser();
    expect((await like(user.token, id)).status).toBe(200);
    expect(await countOf(id)).toBe(1);
    await settled(`post:${id}`);
    expect(await runInDurableObject(item, (instance) => emitterSends(instance.emitter).failures)).toBe(0);
    expect((await d1Counts(`post:${id}`))?.counts.likes).toBe(1);
  }, 60_000);

  it("removes acknowledged edges from its outbox soon after the acknowledgement, without waiting for another write", async () => {
    const id = freshId();
    const item = itemStub(`post:${id}`);
    const outbox = () =>
      runInDurableObject(item, (_, state) =>
        (JSON.parse(state.storage.sql.exec<{ emit_edges: string }>("SELECT emit_edges FROM state").toArray()[0]?.emit_edges ?? "[]") as [string][]).map(([user]) => user).sort(),
      );
    for (const [n, user] of [await newUser(), await newUser()].entries()) {
      await like(user.token, id);
      await expect.poll(async () => (await item.read()).counts.likes, { timeout: 10_000 }).toBe(n + 1);
      await settled(`post:${id}`);
      // Stored before an idle object could be evicted with the acknowledgement in memory only.
      await expect.poll(outbox, { timeout: 10_000, interval: 100 }).toEqual([]);
    }
    expect((await item.read()).counts.likes).toBe(2);
  }, 60_000);

  it("emits under its stored name when an alarm starts the head without one, as after a restart", async () => {
    const id = freshId();
    const key = `post:${id}`;
    const user = await newUser();
    expect((await like(user.token, id)).status).toBe(200);
    await settled(key);
    const diverted = await runInDurableObject(itemStub(key), async (_, state) => {
      // The runtime starts an instance for an alarm of an object not in memory with an id that has no name.
      const id = state.id;
      Object.defineProperty(state, "id", { value: { toString: () => id.toString(), equals: (other: DurableObjectId) => id.equals(other) }, configurable: true });
      let head: ItemCounter;
      try {
        head = new ItemCounter(state, env);
      } finally {
        Reflect.deleteProperty(state, "id");
      }
      emitterSends(head.emitter).diverts = 1;
      head.resnapshot();
      await head.emitter.alarm();
      return emitterSends(head.emitter).diverted.map(({ origin, item }) => [origin.name, item]);
    });
    expect(diverted).toEqual([[key, key]]);
  }, 60_000);

  it("resends at once after a restart what the last instance sent and never heard back about", async () => {
    const { key, asked } = await likedWithEmissionKept();
    // A fresh stub each time: one from before the restart is broken by it.
    const alarmAt = () => runInDurableObject(itemStub(key), async (_, state) => (await state.storage.getAlarm()) ?? Infinity);
    const alarmIn = async () => (await alarmAt()) - Date.now();
    // The alarm waits for the burst's sweep, since an acknowledgement may still come.
    expect(await alarmAt()).toBeGreaterThanOrEqual(asked + ACK_SWEEP_MS);

    await abortAllDurableObjects();
    // The new instance cannot match an acknowledgement of what its predecessor sent, so it resends within one emit interval.
    expect(await alarmIn()).toBeLessThanOrEqual(EMIT_INTERVAL_MS);
    expect((await settled(key)).likes).toBe(1);
    expect((await d1Counts(key))?.counts.likes).toBe(1);
  }, 60_000);

  it("leaves what its sweep finds unacknowledged for the resend time, and stores an acknowledgement that comes later with a sweep of its own", async () => {
    const { key, item, asked } = await likedWithEmissionKept();
    const sentBy = Date.now();
    const look = () =>
      runInDurableObject(item, async (instance, state) => ({
        diverted: [...emitterSends(instance.emitter).diverted],
        alarm: await state.storage.getAlarm(),
        resendAfterMs: instance.emitter.resendAfterMs,
        unfolded: instance.emitter.unfolded,
        pending: instance.emitter.state().pendingEdges,
      }));
    // The sweep runs before any acknowledgement: nothing is sent again, and the alarm then waits for the send's resend time.
    await expect.poll(async () => ((await look()).alarm ?? 0) > asked + 2 * ACK_SWEEP_MS, { timeout: 20_000, interval: 200 }).toBe(true);
    const swept = await look();
    expect(swept.diverted).toHaveLength(1);
    expect(swept.pending).toBe(1);
    expect(swept.alarm).toBeGreaterThanOrEqual(asked + swept.resendAfterMs);
    expect(swept.alarm).toBeLessThanOrEqual(sentBy + swept.resendAfterMs);
    // The acknowledgement comes after the sweep: it asks for a sweep of its own, which stores it and leaves no alarm.
    const acking = Date.now();
    expect((await deliver(swept.diverted)).retried).toEqual([]);
    const acked = await look();
    expect(acked.unfolded).toBe(true);
    expect(acked.pending).toBe(0);
    expect(acked.alarm).toBeGreaterThanOrEqual(acking + ACK_SWEEP_MS);
    expect(acked.alarm).toBeLessThanOrEqual(Date.now() + ACK_SWEEP_MS);
    await expect.poll(look, { timeout: 20_000, interval: 200 }).toMatchObject({ unfolded: false, alarm: null, pending: 0 });
    expect((await d1Counts(key))?.counts.likes).toBe(1);
  }, 60_000);

  it("emits nothing for an item that is only read", async () => {
    const id = freshId();
    expect(await countOf(id)).toBe(0);
    expect(await itemStub(`post:${id}`).emissionState()).toEqual({
      seq: 0,
      ackedSeq: 0,
      pendingEdges: 0,
      counts: { likes: 0, views: 0, shares: 0, saves: 0 },
      unrecorded: false,
    });
    expect(await d1Counts(`post:${id}`)).toBeNull();
  });
});
