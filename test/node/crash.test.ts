import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshStateDir, removeStateDir, type LocalServer } from "../../bench/lib/server";
import { loggedCrashRun, type CrashRound } from "./crash-run";

const KILLS = 3;

describe("a SIGKILL of the whole local server, three times in one run", () => {
  const stateDir = freshStateDir("plaudit-crash-");
  let running: LocalServer | null = null;
  let rounds: CrashRound[] = [];

  // About a minute alone; the margin is for a full `npm test` on a busy machine.
  // Phase timings go to test/artifacts/crash-run.log, to see where a slow run spent its time.
  beforeAll(async () => {
    rounds = await loggedCrashRun("crash-run.log", {
      stateDir,
      users: 24,
      items: 6,
      kills: KILLS,
      acknowledgedBeforeKill: 60,
      onServer: (server) => (running = server),
    });
  }, 420_000);

  afterAll(async () => {
    await running?.kill();
    removeStateDir(stateDir);
  });

  it("kills the server three times with requests in flight", () => {
    expect(rounds).toHaveLength(KILLS);
    for (const round of rounds) expect(round.acknowledged).toBeGreaterThanOrEqual(60);
    expect(rounds.reduce((n, r) => n + r.inFlight, 0)).toBeGreaterThan(0);
  });

  it("keeps every acknowledged like and unlike, as has_liked shows after each restart", () => {
    expect(rounds.flatMap((r) => r.violations)).toEqual([]);
  });

  it("counts each item as exactly the users whose last action landed as a like", () => {
    for (const round of rounds) expect(round.convergence.mismatches).toEqual([]);
  });

  it("never shows a negative count", () => {
    for (const round of rounds) expect(round.convergence.negatives).toEqual([]);
  });

  it("drains every user's outbox after each restart", () => {
    for (const round of rounds) expect(round.drained).toBe(true);
  });
});
