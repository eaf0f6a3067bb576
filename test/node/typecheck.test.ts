// `npm run typecheck` as one of the checks of `npm test`, beside the first
// of the files that start a whole server (vitest.config.ts): those mostly
// wait on their server, so the two compilers use cores that would otherwise idle.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { root } from "./npm-start";

describe("the types", () => {
  it("check in the Worker's project and the Node project (npm run typecheck)", { timeout: 300_000 }, () => {
    const run = spawnSync(process.execPath, ["scripts/typecheck.mjs"], { cwd: root, encoding: "utf8" });
    expect(run.status, `${run.stdout}${run.stderr}`).toBe(0);
  });
});
