import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ALERT_RULES } from "../../metrics/alerts";

type Rule = { alert: string; expr: string; labels: { plaudit_alert?: string } };

const file = parse(readFileSync(resolve(import.meta.dirname, "../../docs/alerts.rules.yml"), "utf8")) as {
  groups: Array<{ rules: Rule[] }>;
};
const rules = file.groups.flatMap((g) => g.rules);

describe("docs/alerts.rules.yml", () => {
  it("has one Prometheus rule for each alert gauge the Worker exposes", () => {
    expect(rules.map((r) => r.labels.plaudit_alert).sort()).toEqual(ALERT_RULES.map((r) => r.name).sort());
  });

  it.each(ALERT_RULES.map((r) => [r.name, r] as const))("compares %s with the Worker's threshold", (name, rule) => {
    const expr = rules.find((r) => r.labels.plaudit_alert === name)!.expr.trim();
    expect(expr.endsWith(`${rule.fires === "above" ? ">" : "<"} ${rule.threshold}`)).toBe(true);
  });
});
