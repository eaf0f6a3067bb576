import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

// promtool is Debian's prometheus package; scripts/ensure-promtool.sh installs it (.ci/run calls it).
const docs = resolve(import.meta.dirname, "../../docs");

function promtool(...args: string[]) {
  const run = spawnSync("promtool", args, { cwd: docs, encoding: "utf8" });
  if (run.error) throw new Error(`promtool could not run (${run.error.message}): run scripts/ensure-promtool.sh as root`);
  return run;
}

type RuleFile = { groups: { rules: { alert: string }[] }[] };
type TestFile = { tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[] };

describe("the Prometheus alert rules", () => {
  it("pass promtool's check", () => {
    const run = promtool("check", "rules", "alerts.rules.yml");
    expect(run.stderr + run.stdout).toContain("SUCCESS");
    expect(run.status).toBe(0);
  });

  it("pass their promtool unit tests", () => {
    const run = promtool("test", "rules", "alerts.test.yml");
    expect(run.stdout + run.stderr).not.toContain("FAILED");
    expect(run.status).toBe(0);
  });

  it("have a unit test for every alert that both fires and resolves", () => {
    const rules = (parse(readFileSync(resolve(docs, "alerts.rules.yml"), "utf8")) as RuleFile).groups.flatMap((g) => g.rules);
    const checks = (parse(readFileSync(resolve(docs, "alerts.test.yml"), "utf8")) as TestFile).tests.flatMap((t) => t.alert_rule_test);
    for (const { alert } of rules) {
      const mine = checks.filter((c) => c.alertname === alert);
      expect(mine.some((c) => c.exp_alerts.length > 0), `${alert} fires in a test`).toBe(true);
      expect(mine.some((c) => c.exp_alerts.length === 0), `${alert} resolves in a test`).toBe(true);
    }
  });

  it("fail promtool when an alert does not fire as a test expects (the tests can fail)", () => {
    const dir = mkdtempSync(join(tmpdir(), "plaudit-alerts-"));
    try {
      copyFileSync(resolve(docs, "alerts.rules.yml"), join(dir, "alerts.rules.yml"));
      const tests = readFileSync(resolve(docs, "alerts.test.yml"), "utf8");
      const broken = tests.replace('values: "0+10x10 100x20"', 'values: "0x30"');
      expect(broken).not.toBe(tests);
      writeFileSync(join(dir, "alerts.test.yml"), broken);
      const run = spawnSync("promtool", ["test", "rules", "alerts.test.yml"], { cwd: dir, encoding: "utf8" });
      expect(run.stdout + run.stderr).toContain("PlauditErrorRateHigh");
      expect(run.status).not.toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
