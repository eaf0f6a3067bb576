import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshStateDir, removeStateDir, type LocalServer } from "../../bench/lib/server";
import { crashRun, type CrashRound } from "./crash-run";

const ARTIFACTS = join(import.meta.dirname, "..", "artifacts");

// A like is answered once the user's object has committed it; the item side
// gets it afterwards. Here the item side gathers changes for two seconds
// before committing them, so the kill lands on likes that were answered and
// not yet delivered: the outboxes must deliver them after the restart.
describe("a SIGKILL between a like's answer and its delivery to the item", () => {
  const stateDir = freshStateDir("plaudit-crash-delivery-");
  let running: LocalServer | null = null;
  let rounds: CrashRound[] = [];

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const logFile = join(ARTIFACTS, "crash-delivery-run.log");
    writeFileSync(logFile, "");
    rounds = await crashRun({
      log: (line) => appendFileSync(logFile, `${new Date().toISOString()} ${line}\n`),
      stateDir,
      users: 16,
      items: 4,
      kills: 1,
      acknowledgedBeforeKill: 40,
      vars: { ITEM_COMMIT_WINDOW_MS: "2000" },
      onServer: (server) => (running = server),
    });
  }, 300_000);

  afterAll(async () => {
    await running?.kill();
    removeStateDir(stateDir);
  });

  it("kills the server while answered likes wait in the users' outboxes", () => {
    expect(rounds).toHaveLength(1);
    expect(rounds[0]!.acknowledged).toBeGreaterThanOrEqual(40);
    expect(rounds[0]!.undeliveredAtRestart).toBeGreaterThan(0);
  });

  it("keeps every acknowledged like and unlike", () => {
    expect(rounds[0]!.violations).toEqual([]);
  });

  it("converges each item's count to exactly the users whose last action landed as a like", () => {
    expect(rounds[0]!.convergence.mismatches).toEqual([]);
    expect(rounds[0]!.convergence.negatives).toEqual([]);
    expect(rounds[0]!.drained).toBe(true);
  });
});
