import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");

type Report = {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
};

describe("docs/openapi.json under a standard linter", () => {
  it("passes @redocly/cli lint with its recommended rules: no errors, no warnings", () => {
    // redocly.yaml picks the rules and turns usage reporting off; the notice check would reach the network.
    const run = spawnSync(process.execPath, ["node_modules/@redocly/cli/bin/cli.js", "lint", "--format=json", "docs/openapi.json"], {
      cwd: root,
      encoding: "utf8",
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
      timeout: 60_000,
    });
    expect(run.error).toBeUndefined();
    const report = JSON.parse(run.stdout) as Report;
    const problems = report.problems.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    expect(run.status).toBe(0);
  });
});
