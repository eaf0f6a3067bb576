import { describe, expect, it, vi } from "vitest";
import type { ReshardRequest, ReshardResponse } from "../../shared/reshard";
import { call } from "../workers/helpers";
import { RESHARD_TEST_MS, expectAgreement, feedReads, reshard, reshardCall, seedLoad, underLoad, type Load } from "./reshard-load";

/** Feeds read while the runner is dead, before it is started again. */
const FEEDS_WHILE_DEAD = 3;

/**
 * A runner that dies at the first step `kill` names, after the service did
 * the step but before the runner learned its answer (as a killed process or
 * a dropped connection leaves it).
 */
function dying(load: Load, kill: (step: ReshardResponse) => boolean) {
  const send = reshardCall(load);
  return async (request: ReshardRequest): Promise<ReshardResponse> => {
    const step = await send(request);
    if (kill(step)) throw new Error(`killed in ${step.phase} at ${step.visited}/${step.total}`);
    return step;
  };
}

describe("npm run reshard, killed midway and run again", () => {
  it("goes on from where it stood, to two databases, with the same guarantees under load", async () => {
    const load = await seedLoad();
    const before = await feedReads(load);
    const kills: string[] = [];
    await underLoad(load, async (tally) => {
      // Killed while copying, then while cleaning up; each time the load goes on before the runner is started again:
      // a few whole feeds are read from the reshard left halfway.
      for (const kill of [(step: ReshardResponse) => step.phase === "copy" && step.visited > 0, (step: ReshardResponse) => step.phase === "cleanup" && step.visited > 0]) {
        await reshard(load, 2, dying(load, kill)).then(
          () => expect.unreachable("the runner was to be killed"),
          (error: Error) => kills.push(error.message),
        );
        const feeds = tally.feeds;
        await vi.waitFor(() => expect(tally.feeds).toBeGreaterThanOrEqual(feeds + FEEDS_WHILE_DEAD), { timeout: 30_000, interval: 20 });
      }
      expect(await reshard(load, 2)).toMatchObject({ from: 2, to: 2, phase: "done" });
    });
    expect(kills).toHaveLength(2);
    expect(kills[0]).toMatch(/^killed in copy/);
    expect(kills[1]).toMatch(/^killed in cleanup/);

    await expectAgreement(load, 2);
    const after = await feedReads(load);
    expect(after.overBound).toBe(before.overBound);
  }, RESHARD_TEST_MS);

  it("refuses another layout while one reshard runs, and answers a finished one with nothing to do", async () => {
    const load = await seedLoad();
    const send = reshardCall(load);
    expect(await send({ databases: 2, limit: 7 })).toMatchObject({ phase: "done", from: 2, to: 2 });
    expect((await send({ databases: 4, limit: 7 })).phase).toBe("dual");
    const refused = await call("POST", "/v1/admin/reshard", { token: load.service, body: { databases: 3 } });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/from 2 to 4 count databases is under way/);
    expect(await reshard(load, 4)).toMatchObject({ phase: "done", from: 4 });
    await expectAgreement(load, 4);
  }, RESHARD_TEST_MS);
});
