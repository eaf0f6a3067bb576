import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { zeroCounts } from "../../shared/counters";
import { readHistory } from "../../workers/reads/history-reader";
import { historyWrites, utcDay } from "../../workers/stores/item-history";
import { call, freshId, json, like, newUser, tokenFor, unlike } from "./helpers";
import { d1Counts, deliver, headEmission, settled } from "./pipeline-helpers";

const DAY = 86_400_000;
const key = () => `post:${freshId()}`;

async function historyRows(item: string) {
  const [type, id] = item.split(":");
  const { results } = await env.DB.prepare(
    "SELECT day, likes, saves, views, shares, unique_viewers, seq, updated_at FROM item_history WHERE item_type = ? AND item_id = ? ORDER BY day",
  )
    .bind(type, id)
    .all();
  return results;
}

const snapshot = (seq: number, likes: number, views = 0) => ({ seq, counts: { ...zeroCounts(), likes, views } });

/** The history's writes in a batch of their own, as of `now`: the snapshots that became their item's newest. */
async function writeHistory(snapshots: Map<string, ReturnType<typeof snapshot>>, now: number) {
  const writes = historyWrites(env.DB, snapshots, now);
  return writes.newest(await env.DB.batch(writes.statements));
}

describe("daily history in D1", () => {
  it("keeps the newest snapshot of the day, and redelivered or stale snapshots change nothing", async () => {
    const item = key();
    // Written on the day of the delivery: the day before it, or after it should midnight (UTC) fall between.
    const before = utcDay(Date.now());
    await deliver([headEmission(item, { seq: 3, counts: { likes: 3 } }), headEmission(item, { seq: 5, counts: { likes: 5, views: 2 } })]);
    const rows = await historyRows(item);
    expect(rows).toMatchObject([{ likes: 5, views: 2, saves: 0, shares: 0, seq: 5 }]);
    expect([before, utcDay(Date.now())]).toContain(rows[0]!.day);

    const result = await deliver([headEmission(item, { seq: 5, counts: { likes: 5, views: 2 } }), headEmission(item, { seq: 4, counts: { likes: 4 } })]);
    expect(result.retried).toEqual([]);
    expect(await historyRows(item)).toEqual(rows);
  });

  it("writes a batch's counts, index rows and history in one D1 transaction per database", async () => {
    const items = [key(), key(), key()];
    // This file shares its runtime with others whose consumers run meanwhile: the batches are counted on a binding of the test's own.
    let batches = 0;
    const db = new Proxy(env.DB, {
      get(target, name) {
        if (name === "batch") return (statements: D1PreparedStatement[]) => (batches++, target.batch(statements));
        const value: unknown = Reflect.get(target, name);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const result = await deliver(
      items.map((item, i) => headEmission(item, { seq: 1, counts: { likes: i + 1 } })),
      { DB: db },
    );
    expect(result.retried).toEqual([]);
    for (const [i, item] of items.entries()) {
      expect(await d1Counts(item)).toMatchObject({ seq: 1, counts: { likes: i + 1 } });
      expect(await historyRows(item)).toMatchObject([{ likes: i + 1, seq: 1 }]);
    }
    // Every item counts in DB here (one count database): one batch for the three items' counts, index rows and history.
    expect(batches).toBe(1);
  });

  it("never writes a snapshot older than one an earlier day holds, so totals never go back, and says which it wrote", async () => {
    const item = key();
    const today = Date.now();
    expect([...(await writeHistory(new Map([[item, snapshot(9, 9)]]), today - DAY)).keys()]).toEqual([item]);
    expect((await writeHistory(new Map([[item, snapshot(8, 8)]]), today)).size).toBe(0);
    expect((await writeHistory(new Map([[item, snapshot(9, 9)]]), today)).size).toBe(0);
    expect((await historyRows(item)).map((r) => [r.day, r.likes, r.seq])).toEqual([[utcDay(today - DAY), 9, 9]]);
  });

  it("answers each day's change as the difference of day-end totals, days without a row unchanged", async () => {
    const item = key();
    const now = Date.parse("2026-06-10T12:00:00Z");
    await writeHistory(new Map([[item, snapshot(1, 4, 10)]]), now - 5 * DAY);
    await writeHistory(new Map([[item, snapshot(2, 6, 15)]]), now - 2 * DAY);
    await writeHistory(new Map([[item, snapshot(3, 5, 21)]]), now);
    const days = await readHistory(env, env.DB, item, 4, now);
    expect(days.map((d) => [d.date, d.likes, d.views, d.totals.likes, d.totals.views])).toEqual([
      ["2026-06-07", 0, 0, 4, 10],
      ["2026-06-08", 2, 5, 6, 15],
      ["2026-06-09", 0, 0, 6, 15],
      ["2026-06-10", -1, 6, 5, 21],
    ]);
  });
});

describe("history after a load and a drain", () => {
  it("holds each item's exact day-end totals, the same as the object's and D1's counts", async () => {
    // A load that runs past midnight (UTC) ends its totals in the next day's row.
    const firstDay = utcDay(Date.now());
    const ids = [freshId(), freshId(), freshId()];
    const users = await Promise.all(Array.from({ length: 12 }, () => newUser()));
    await Promise.all(
      users.map(async (user, u) => {
        for (const [i, id] of ids.entries()) {
          if ((u + i) % 3 === 0) continue;
          expect((await like(user.token, id)).status).toBe(200);
          if ((u * 7 + i) % 4 === 0) expect((await unlike(user.token, id)).status).toBe(200);
        }
      }),
    );
    for (const [i, id] of ids.entries()) {
      const item = `post:${id}`;
      const counts = await settled(item);
      expect(counts.likes).toBe(users.filter((_, u) => (u + i) % 3 !== 0 && (u * 7 + i) % 4 !== 0).length);
      const stored = await d1Counts(item);
      const row = (await historyRows(item)).at(-1);
      expect([firstDay, utcDay(Date.now())]).toContain(row?.day);
      expect(row).toMatchObject({ likes: counts.likes, saves: counts.saves, views: counts.views, shares: counts.shares, seq: stored!.seq });
      expect(stored!.counts.likes).toBe(counts.likes);
    }
  });
});

describe("GET /v1/history", () => {
  it("answers today's likes after the pipeline has written them", async () => {
    const id = freshId();
    const firstDay = utcDay(Date.now());
    const users = await Promise.all([newUser(), newUser(), newUser()]);
    for (const user of users) expect((await like(user.token, id)).status).toBe(200);
    const counts = await settled(`post:${id}`);
    expect(counts.likes).toBe(3);
    // The day the likes were written, and the day of the answer: one day unless midnight (UTC) fell between.
    const [row] = await historyRows(`post:${id}`);
    const asked = utcDay(Date.now());
    expect([firstDay, asked]).toContain(row?.day);
    const res = await call("GET", `/v1/history?item_id=${id}&item_type=post&days=7`);
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.item_id).toBe(id);
    expect(body.days).toHaveLength(7);
    type Day = { date: string; likes: number; totals: { likes: number } };
    const days: Day[] = body.days;
    expect([asked, utcDay(Date.now())]).toContain(days.at(-1)!.date);
    const written = days.findIndex((d) => d.date === row!.day);
    expect(written).toBeGreaterThanOrEqual(days.length - 2);
    expect(days[written]).toEqual({ date: row!.day, likes: 3, saves: 0, views: 0, shares: 0, totals: { likes: 3, saves: 0, views: 0, shares: 0 } });
    expect(days.slice(0, written).every((d) => d.likes === 0 && d.totals.likes === 0)).toBe(true);
    expect(days.slice(written + 1).every((d) => d.likes === 0 && d.totals.likes === 3)).toBe(true);
  });

  it("answers 30 days of zeros for an item nobody touched", async () => {
    const body = await json(await call("GET", `/v1/history?item_id=${freshId()}&item_type=reel`));
    expect(body.days).toHaveLength(30);
    expect(body.days.every((d: { likes: number; views: number }) => d.likes === 0 && d.views === 0)).toBe(true);
  });

  it("refuses bad parameters with the error shape", async () => {
    for (const query of ["item_id=1&item_type=post&days=0", "item_id=1&item_type=post&days=367", "item_id=1&item_type=post&days=2.5", "item_id=01&item_type=post", "item_id=1&item_type=photo"]) {
      const res = await call("GET", `/v1/history?${query}`);
      expect(res.status, query).toBe(400);
      const body = await json(res);
      expect(body.error).toBe("invalid_request");
      expect(body.details.length).toBeGreaterThan(0);
    }
  });
});

describe("unique viewers", () => {
  it("counts distinct viewers, not views, on count reads when asked, and the admin view shows the stored seq", async () => {
    const id = freshId();
    const item = `post:${id}`;
    const viewers = await Promise.all(Array.from({ length: 5 }, () => newUser()));
    const view = (token: string) => call("POST", "/v1/view", { token, body: { item_id: id, item_type: "post" } });
    for (const viewer of viewers) expect((await view(viewer.token)).status).toBe(200);
    for (let i = 0; i < 4; i++) expect((await view(viewers[0]!.token)).status).toBe(200);

    await vi.waitFor(
      async () => {
        const [row] = await historyRows(item);
        expect(row).toMatchObject({ views: 9, unique_viewers: 5 });
      },
      { timeout: 20_000, interval: 200 },
    );
    const single = await json(await call("GET", `/v1/count?item_id=${id}&item_type=post&unique_viewers=true`));
    expect(single.counts).toMatchObject({ views: 9, unique_viewers: 5 });
    const plain = await json(await call("GET", `/v1/count?item_id=${id}&item_type=post`));
    expect(plain.counts).not.toHaveProperty("unique_viewers");
    const batch = await json(
      await call("POST", "/v1/counts", { body: { items: [{ item_id: id, item_type: "post" }, { item_id: freshId(), item_type: "post" }], counter_types: ["views"], unique_viewers: true } }),
    );
    expect(Object.values(batch.counts)).toEqual([{ views: 9, unique_viewers: 5 }, { views: 0, unique_viewers: 0 }]);

    const [row] = await historyRows(item);
    const admin = await json(await call("GET", `/v1/admin/items/post/${id}`, { token: await tokenFor(freshId(), { role: "service" }) }));
    expect(admin.seq).toBe(row!.seq);
  });
});
