import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { freshId, like, newUser, tokenFor } from "./helpers";
import { sample, scrape, total, type Family } from "./metrics-exposition";

const itemStub = (key: string) => env.ITEM_COUNTER.get(env.ITEM_COUNTER.idFromName(key));
const userStub = (id: string) => env.USER_LIKES.get(env.USER_LIKES.idFromName(`u:${id}`));

/** An object with nothing left to do: no alarm, nothing in its outbox, every emission acknowledged and stored. */
async function drained(_: unknown, state: DurableObjectState): Promise<boolean> {
  const sql = state.storage.sql;
  const columns = new Set(sql.exec<{ name: string }>("SELECT name FROM pragma_table_info('state')").toArray().map((c) => c.name));
  const row = sql.exec<Record<string, string | number>>("SELECT * FROM state").one();
  const outbox = columns.has("outbox") ? (JSON.parse(String(row.outbox)) as unknown[]).length : 0;
  const emission = columns.has("emit_edges")
    ? { edges: (JSON.parse(String(row.emit_edges)) as unknown[]).length, unacked: Number(row.emit_seq) - Number(row.emit_acked_seq) }
    : { edges: 0, unacked: 0 };
  return (await state.storage.getAlarm()) === null && outbox === 0 && emission.edges === 0 && emission.unacked === 0;
}

const OBJECTS = ["user_likes", "item_counter"] as const;

/** What a like written alone costs, counted: 5 billed rows at the user, 4 at the item, 3 in D1; 2 commits on each side. */
const LONE_LIKE_BILLED_ROWS = 12;
const LONE_LIKE_COMMITS = 4;

/** What the objects and D1 wrote, by object kind, from the metrics. */
function costs(families: Family[]) {
  const of = (name: string, labels: Record<string, string> = {}) => sample(families, name, labels);
  return {
    ...Object.fromEntries(
      OBJECTS.map((object) => [
        object,
        {
          commits: of("plaudit_storage_commits_total", { object }),
          rows: of("plaudit_storage_rows_written_total", { object }),
          alarms: of("plaudit_storage_alarms_set_total", { object }),
          deletes: of("plaudit_storage_alarms_deleted_total", { object }),
        },
      ]),
    ),
    d1Rows: total(families, "plaudit_d1_rows_written_total"),
  } as Record<(typeof OBJECTS)[number], { commits: number; rows: number; alarms: number; deletes: number }> & { d1Rows: number };
}

type Costs = ReturnType<typeof costs>;

function minus(after: Costs, before: Costs): Costs {
  const object = (o: (typeof OBJECTS)[number]) => ({
    commits: after[o].commits - before[o].commits,
    rows: after[o].rows - before[o].rows,
    alarms: after[o].alarms - before[o].alarms,
    deletes: after[o].deletes - before[o].deletes,
  });
  return { user_likes: object("user_likes"), item_counter: object("item_counter"), d1Rows: after.d1Rows - before.d1Rows };
}

/** Reads of the metrics polled this far apart must agree for the costs to count as settled, at most QUIET_READS times. */
const QUIET_POLL_MS = 1_500;
const QUIET_READS = 20;

/** Metrics that stood still between two reads QUIET_POLL_MS apart, once the objects are drained. */
async function quiescentCosts(service: string, objects: DurableObjectStub[]): Promise<Costs> {
  for (const stub of objects) await expect.poll(() => runInDurableObject(stub, drained), { timeout: 20_000, interval: 200 }).toBe(true);
  let last = JSON.stringify(costs(await scrape(service)));
  for (let read = 0; read < QUIET_READS; read++) {
    await new Promise((resolve) => setTimeout(resolve, QUIET_POLL_MS));
    const next = JSON.stringify(costs(await scrape(service)));
    if (next === last) return JSON.parse(next) as Costs;
    last = next;
  }
  throw new Error(`the like's costs never stood still over ${QUIET_READS} reads ${QUIET_POLL_MS} ms apart: ${last}`);
}

describe("what one like writes", () => {
  it("stays within its rows and commits, objects and D1 together, for a like by a known user of a known item", async () => {
    const service = await tokenFor(freshId(), { role: "service" });
    const user = await newUser();
    const item = freshId();
    // Both objects exist and are drained: the like measured creates no schema and shares no commit.
    expect((await like(user.token, freshId())).status).toBe(200);
    expect((await like((await newUser()).token, item)).status).toBe(200);
    const objects = [userStub(user.id), itemStub(`post:${item}`)];
    const before = await quiescentCosts(service, objects);

    expect((await like(user.token, item)).status).toBe(200);
    const spent = minus(await quiescentCosts(service, objects), before);
    const user_ = spent.user_likes;
    const item_ = spent.item_counter;
    const billed = user_.rows + user_.alarms + item_.rows + item_.alarms + spent.d1Rows;
    const commits = user_.commits + item_.commits;
    const breakdown =
      `user: ${user_.commits} commits, ${user_.rows} rows, ${user_.alarms} alarms set, ${user_.deletes} deleted; ` +
      `item: ${item_.commits} commits, ${item_.rows} rows, ${item_.alarms} alarms set, ${item_.deletes} deleted; D1: ${spent.d1Rows} rows; ` +
      `${billed} billed rows and ${commits} commits in all`;
    // Each side counted its part: a bound met because a counter stopped counting would prove nothing.
    expect([user_.commits > 0, user_.rows > 0, item_.commits > 0, item_.rows > 0, spent.d1Rows > 0], breakdown).toEqual([true, true, true, true, true]);
    expect(billed, breakdown).toBeLessThanOrEqual(LONE_LIKE_BILLED_ROWS);
    expect(commits, breakdown).toBeLessThanOrEqual(LONE_LIKE_COMMITS);
    // Each side's sweep deleted its alarm itself, once: it replaces the runtime's own deletion, a transaction no counter here sees.
    expect([user_.deletes, item_.deletes], breakdown).toEqual([1, 1]);
  });
});
