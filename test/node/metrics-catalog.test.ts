import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { METRIC_HELP } from "../../metrics/catalog";
import { LAYERS, sources } from "../../scripts/layering";

const root = resolve(import.meta.dirname, "../..");

/**
 * Every name a `metrics.count`, `.gauge` or `.observe` call records, as
 * exported (`plaudit_` before it): each string literal of the call's first
 * argument, so a name chosen by a condition (`hot ? "a" : "b"`) counts both;
 * and each call whose first argument holds no literal (a name this test
 * cannot read, so one it cannot hold to the catalog).
 */
function recordedNames(source: string): { names: string[]; unread: string[] } {
  const names: string[] = [];
  const unread: string[] = [];
  for (const call of source.matchAll(/\bmetrics\.(?:count|gauge|observe)\(([^,{)]*)/g)) {
    const literals = [...call[1]!.matchAll(/"([a-z][a-z0-9_]*)"/g)].map((m) => `plaudit_${m[1]}`);
    if (literals.length === 0) unread.push(call[0]);
    names.push(...literals);
  }
  return { names, unread };
}

/** The metric names of the table in docs/operations.md ("What is recorded, and by whom"): each row's first cell. */
function tableNames(markdown: string): string[] {
  const section = markdown.split("\n## What is recorded, and by whom\n")[1]!.split("\n## ")[0]!;
  return section
    .split("\n")
    .filter((line) => line.startsWith("| `plaudit_"))
    .flatMap((line) => [...line.split("|")[1]!.matchAll(/`(plaudit_[a-z0-9_]+)`/g)].map((m) => m[1]!));
}

describe("the metrics catalog", () => {
  // Every layer of the product (shared/, metrics/, the objects, the Worker); the recorder itself names its
  // methods in its comments (`metrics.count(...)`), and records nothing.
  const files = Object.keys(LAYERS)
    .flatMap((dir) => sources(root, dir))
    .filter((file) => file !== "metrics/recorder.ts");
  const calls = files.map((file) => ({ file, ...recordedNames(readFileSync(join(root, file), "utf8")) }));
  const recorded = new Set(calls.flatMap(({ names }) => names));
  const catalog = new Set(Object.keys(METRIC_HELP));
  const table = new Set(tableNames(readFileSync(join(root, "docs/operations.md"), "utf8")));

  it("reads the names of a call, a conditional name included, and of a table row with two names", () => {
    expect(recordedNames('metrics.count(hot ? "a_total" : "b_total");\nmetrics.gauge("c", { x: 1 }, 2);\nmetrics.count(name);')).toEqual({
      names: ["plaudit_a_total", "plaudit_b_total", "plaudit_c"],
      unread: ["metrics.count(name"],
    });
    expect(tableNames("\n## What is recorded, and by whom\n\n| `plaudit_a` / `plaudit_b` | counter | `plaudit_c` in a label |\n\n## Next\n| `plaudit_d` |")).toEqual([
      "plaudit_a",
      "plaudit_b",
    ]);
  });

  it("has a HELP line for every metric the code records, and none for a metric no code records", () => {
    expect(calls.flatMap(({ file, unread }) => unread.map((call) => `${file}: ${call}`))).toEqual([]);
    expect(recorded.size).toBeGreaterThan(30);
    expect([...recorded].filter((name) => !catalog.has(name))).toEqual([]);
    expect([...catalog].filter((name) => !recorded.has(name))).toEqual([]);
  });

  it("is the table operators read in docs/operations.md, row for row", () => {
    expect([...catalog].filter((name) => !table.has(name))).toEqual([]);
    expect([...table].filter((name) => !catalog.has(name))).toEqual([]);
  });
});
