// A server the tests start (bench/lib/server.ts) that never answers fails
// its start with the end of its own output, which would otherwise go with
// its state folder.
import { describe, expect, it } from "vitest";
import { freshStateDir, removeStateDir, startServer } from "../../bench/lib/server";

describe("a local server that exits before it answers", () => {
  it("fails its start with its own last words", async () => {
    const stateDir = freshStateDir("plaudit-start-fails-");
    try {
      await expect(startServer({ stateDir, env: { PLAUDIT_LOG_LEVEL: "loud" } })).rejects.toThrow(
        /exited before it was ready[\s\S]*Its output, last 100 lines:[\s\S]*PLAUDIT_LOG_LEVEL is one of debug, info, log, warn, error, none, not "loud"/,
      );
    } finally {
      removeStateDir(stateDir);
    }
  });
});
