import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshStateDir, removeStateDir, type LocalServer } from "../../bench/lib/server";
import { loggedCrashRun, type CrashRound } from "./crash-run";

// A like is answered once the user's object has committed it; the item side
// gets it afterwards. Here the item side gathers changes for two seconds
// before committing them, so the kill lands on likes that were answered and
// not yet delivered: the outboxes must deliver them after the restart.
const stateDir = freshStateDir("plaudit-crash-delivery-");
let server: LocalServer | null = null;
let round: CrashRound | undefined;

beforeAll(async () => {
  const rounds = await loggedCrashRun("crash-delivery-run.log", {
    stateDir,
    users: 16,
    items: 4,
    kills: 1,
    acknowledgedBeforeKill: 40,
    vars: { ITEM_COMMIT_WINDOW_MS: "2000" },
    onServer: (started) => (server = started),
  });
  round = rounds[0];
}, 300_000);

afterAll(async () => {
  await server?.kill();
  removeStateDir(stateDir);
});

describe("a SIGKILL between a like's answer and its delivery to the item", () => {
  it("kills the server while answered likes wait in the users' outboxes", () => {
    expect(round?.acknowledged).toBeGreaterThanOrEqual(40);
    expect(round?.undeliveredAtRestart).toBeGreaterThan(0);
  });

  it("keeps every acknowledged like and unlike", () => {
    expect(round?.violations).toEqual([]);
  });

  it("converges each item's count to exactly the users whose last action landed as a like", () => {
    expect(round?.convergence.mismatches).toEqual([]);
    expect(round?.convergence.negatives).toEqual([]);
    expect(round?.drained).toBe(true);
  });
});
