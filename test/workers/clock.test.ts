import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import type { ImportOutcome } from "../../shared/contracts";
import type { ImportEdge } from "../../shared/import";
import { runImport, type ImportProgress } from "../../shared/import-run";
import { userObjectName } from "../../shared/object-names";
import { drainIntents } from "../../workers/likes/intents";
import { call, freshId, json, like, tokenFor, unlike } from "./helpers";
import { itemStub } from "./pipeline-helpers";
import { setHeld } from "./fault-points";

/*
 * One clock (I6): every late action of a user on an item (a toggle that
 * hung, a kept intent, an imported edge, a remembered unlike) is compared
 * with the user's last action on it (`acted_at`), and a newer live action
 * always wins, whether or not it changed the edge's state.
 */

const userStub = (id: string) => env.USER_LIKES.get(env.USER_LIKES.idFromName(userObjectName(id)));
const dayOf = (day: number) => Date.UTC(2024, 0, day);

async function sendBatch(edges: ImportEdge[]): Promise<ImportOutcome[]> {
  const response = await call("POST", "/v1/admin/import", { token: await tokenFor(freshId(), { role: "service" }), body: { edges } });
  expect(response.status).toBe(200);
  return (await json<{ results: ImportOutcome[] }>(response)).results;
}

type Line = { day: number; kind: "like" | "unlike" };
const lineOf = (user: string, item: string, { day, kind }: Line) =>
  JSON.stringify({ user_id: user, item_id: item, item_type: "post", liked_at: new Date(dayOf(day)).toISOString(), kind });

/** Imports the lines as a fresh run (no checkpoint) in batches of `batchSize`: its report, without the refusals. */
async function importLines(lines: readonly string[], batchSize = 100): Promise<Omit<ImportProgress, "refusals" | "line">> {
  let saved: ImportProgress | null = null;
  const report = await runImport({
    lines: (async function* () {
      yield* lines;
    })(),
    format: "ndjson",
    batchSize,
    checkpoint: { load: async () => null, save: async (progress) => void (saved = progress) },
    send: sendBatch,
  });
  expect(saved).not.toBeNull();
  const { refusals, line, ...counts } = report;
  expect(refusals).toEqual([]);
  expect(line).toBe(lines.length);
  return counts;
}

/** The user's edge and the item's count once the item side has every change of the user. */
async function finalState(user: string, item: string): Promise<{ liked: boolean; count: number }> {
  await vi.waitFor(async () => expect(await userStub(user).pendingDeliveries()).toBe(0), { timeout: 20_000, interval: 50 });
  const liked = (await userStub(user).hasLiked([`post:${item}`], "likes"))[`post:${item}`]!;
  return { liked, count: (await itemStub(`post:${item}`).read()).counts.likes };
}

async function setUnreachable(user: string, unreachable: boolean): Promise<void> {
  await runInDurableObject(userStub(user), (instance) => {
    setHeld(instance, "toggle", unreachable, { fail: true });
  });
}

describe("one clock orders every late action against a newer live one", () => {
  it("a toggle asked before the user's newer unlike changes nothing", async () => {
    const [user, item] = [freshId(), freshId()];
    const token = await tokenFor(user);
    const askedAt = Date.now();
    await vi.waitFor(() => expect(Date.now()).toBeGreaterThan(askedAt), { interval: 1 });
    // The live unlike changes nothing (never liked), and still records when the user acted.
    expect((await json(await unlike(token, item))).status).toBe("not_liked");
    const late = await userStub(user).toggle({ user, item: `post:${item}`, counter: "likes", on: true, askedAt });
    expect(late).toEqual({ kind: "superseded" });
    expect(await finalState(user, item)).toEqual({ liked: false, count: 0 });
  });

  it("a kept unlike loses to a newer live like that found the item already liked", async () => {
    const [user, item] = [freshId(), freshId()];
    const token = await tokenFor(user);
    expect((await like(token, item)).status).toBe(200);
    await setUnreachable(user, true);
    expect((await unlike(token, item)).status).toBe(202);
    await setUnreachable(user, false);
    const kept = (await env.DB.prepare("SELECT asked_at FROM pending_intents WHERE user_id = ?").bind(user).first<{ asked_at: number }>())!;
    await vi.waitFor(() => expect(Date.now()).toBeGreaterThan(kept.asked_at), { interval: 1 });
    expect((await json(await like(token, item))).status).toBe("already_liked");
    await vi.waitFor(
      async () => {
        await drainIntents(env);
        expect((await env.DB.prepare("SELECT count(*) AS n FROM pending_intents WHERE user_id = ?").bind(user).first<{ n: number }>())!.n).toBe(0);
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(await finalState(user, item)).toEqual({ liked: true, count: 1 });
  });

  it("an imported like older than a live unlike of an item never liked is superseded", async () => {
    const [user, item] = [freshId(), freshId()];
    expect((await json(await unlike(await tokenFor(user), item))).status).toBe("not_liked");
    const older = lineOf(user, item, { day: 1, kind: "like" });
    expect(await importLines([older])).toMatchObject({ applied: 0, superseded: 1 });
    expect(await finalState(user, item)).toEqual({ liked: false, count: 0 });
  });

  it("a remembered unlike stops an older imported like, yields to a newer live like, and a rerun changes nothing", async () => {
    const [user, item] = [freshId(), freshId()];
    const file = [lineOf(user, item, { day: 2, kind: "unlike" })];
    expect(await importLines(file)).toMatchObject({ applied: 0, duplicates: 1 });
    expect(await importLines([lineOf(user, item, { day: 1, kind: "like" })])).toMatchObject({ applied: 0, superseded: 1 });
    expect((await like(await tokenFor(user), item)).status).toBe(200);
    expect(await importLines(file)).toMatchObject({ applied: 0, superseded: 1 });
    expect(await finalState(user, item)).toEqual({ liked: true, count: 1 });
  });
});

/** The model: the newest line wins, and at an equal time the unlike. */
function expectedState(lines: readonly Line[]): { liked: boolean; count: number } {
  const newest = lines.reduce((a, b) => (b.day > a.day || (b.day === a.day && b.kind === "unlike") ? b : a));
  const liked = newest.kind === "like";
  return { liked, count: liked ? 1 : 0 };
}

describe("an import's answer does not depend on its line order", () => {
  it("gives the same state, counts and report for the file of the issue in every order, and a rerun changes nothing", async () => {
    const file: Line[] = [
      { day: 1, kind: "like" },
      { day: 61, kind: "like" },
      { day: 32, kind: "unlike" },
    ];
    const orders = [
      [0, 1, 2],
      [0, 2, 1],
      [1, 0, 2],
      [1, 2, 0],
      [2, 0, 1],
      [2, 1, 0],
    ];
    for (const order of orders) {
      const [user, item] = [freshId(), freshId()];
      const lines = order.map((i) => lineOf(user, item, file[i]!));
      expect(await importLines(lines)).toEqual({ read: 3, applied: 3, duplicates: 0, superseded: 0, refused: 0 });
      expect(await finalState(user, item)).toEqual({ liked: true, count: 1 });
      expect(await importLines(lines)).toEqual({ read: 3, applied: 0, duplicates: 2, superseded: 1, refused: 0 });
      expect(await importLines(lines, 1)).toEqual({ read: 3, applied: 0, duplicates: 2, superseded: 1, refused: 0 });
      expect(await finalState(user, item)).toEqual({ liked: true, count: 1 });
    }
  });

  it("over shuffled files and batch sizes: the newest line's state, the same report in one batch, and nothing applied on a rerun", async () => {
    const line = fc.record({ day: fc.integer({ min: 1, max: 5 }), kind: fc.constantFrom<"like" | "unlike">("like", "unlike") });
    const scenario = fc
      .array(line, { minLength: 1, maxLength: 6 })
      .chain((lines) =>
        fc.record({ lines: fc.constant(lines), shuffled: fc.shuffledSubarray(lines, { minLength: lines.length, maxLength: lines.length }), batchSize: fc.integer({ min: 1, max: 3 }) }),
      );
    await fc.assert(
      fc.asyncProperty(scenario, async ({ lines, shuffled, batchSize }) => {
        const expected = expectedState(lines);
        const [a, b, c, item] = [freshId(), freshId(), freshId(), freshId()];
        const first = await importLines(lines.map((l) => lineOf(a, item, l)));
        const second = await importLines(shuffled.map((l) => lineOf(b, item, l)));
        expect(second).toEqual(first);
        // Batches split the file: the report may differ, the state may not.
        await importLines(shuffled.map((l) => lineOf(c, item, l)), batchSize);
        for (const user of [a, b, c]) {
          expect((await finalState(user, item)).liked).toBe(expected.liked);
          const rerun = await importLines(shuffled.map((l) => lineOf(user, item, l)), batchSize);
          expect(rerun.applied).toBe(0);
          expect((await finalState(user, item)).liked).toBe(expected.liked);
        }
        expect((await finalState(a, item)).count).toBe(3 * expected.count);
      }),
      { numRuns: 15 },
    );
  });
});
