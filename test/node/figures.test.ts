import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { codeState, costsReportOf, figureBlocks, pendingBlocks, readReports, regenerate, renderFigure, runFigure, staleFigures, type FigureReport } from "../../bench/lib/figures";
import type { Costs } from "../../bench/lib/write-costs";

const root = resolve(import.meta.dirname, "../..");
const reports = readReports(join(root, "bench", "reports"));
const docs = readdirSync(join(root, "docs"))
  .filter((f) => f.endsWith(".md"))
  .map((f) => ({ doc: `docs/${f}`, text: readFileSync(join(root, "docs", f), "utf8") }));
const blocks = docs.flatMap(({ doc, text }) => figureBlocks(text).map((block) => ({ doc, ...block })));

const sample: FigureReport = runFigure("sample", {
  argv: ["--scenario", "write", "--seconds", "10"],
  commit: "abc1234",
  startedAt: "2026-12-03T13:00:00.000Z",
  machine: "2 cores, load average 1.0 1.0 1.0 at the end",
  summary: {
    perOp: { like: { count: 1200, opsPerSecond: 120.04, p50: 20.25, p99: 80.5, errors: 0, rejected: 0 } },
    total: { count: 1200, opsPerSecond: 120.04, p50: 20.25, p99: 80.5, errors: 0, rejected: 0 },
  },
});

describe("the figure tables in docs/", () => {
  it("are each rendered from a committed report, which names its command and commit", () => {
    expect(blocks.length).toBeGreaterThan(0);
    for (const { doc, name } of blocks) {
      const report = reports.get(name);
      expect(report, `${doc}: no bench/reports/${name}.json`).toBeDefined();
      expect(report!.command).toMatch(/^npm run /);
      expect(report!.commit).toMatch(/^[0-9a-f]{7,}$/);
    }
  });

  it.each(docs.filter(({ text }) => figureBlocks(text).length > 0))("$doc: every table equals what its report renders", ({ text }) => {
    expect(staleFigures(text, reports)).toEqual([]);
  });

  it("still to take each name the command that writes their report, and none has a report waiting to be rendered", () => {
    const pending = docs.flatMap(({ doc, text }) => pendingBlocks(text).map((block) => ({ doc, ...block })));
    for (const { doc, name, command } of pending) {
      expect(command, `${doc}: ${name}`).toMatch(/^npm run (bench|bench:import) -- /);
      // A viral run writes its step table as NAME-steps beside NAME, a run with writes its costs as NAME-costs.
      const written = name.replace(/-(steps|costs)$/, "");
      expect(command.split(" "), `${doc}: ${name}`).toContain(written);
      expect(command, `${doc}: ${name}`).toMatch(new RegExp(`--figure ${written}( |$)`));
      expect(reports.has(name), `${doc}: bench/reports/${name}.json exists: run npm run figures`).toBe(false);
    }
  });

  it("hold no table still to take: every table in docs/ is rendered from a committed report", () => {
    const pending = docs.flatMap(({ doc, text }) => pendingBlocks(text).map(({ name }) => `${doc}: ${name}`));
    expect(pending).toEqual([]);
  });

  it("leave no committed report unused", () => {
    const used = new Set(blocks.map((b) => b.name));
    expect([...reports.keys()].filter((name) => !used.has(name))).toEqual([]);
  });
});

describe("a figure table", () => {
  const doc = `intro\n\n<!-- figures:sample -->\nold\n<!-- /figures -->\n\nafter\n`;
  const rendered = regenerate(doc, new Map([["sample", sample]]));

  it("renders its report's numbers with each column's decimals, and names the run", () => {
    expect(renderFigure(sample)).toBe(
      [
        "Run: `npm run bench -- --scenario write --seconds 10` at commit abc1234, 2026-12-03 (2 cores, load average 1.0 1.0 1.0 at the end); report `bench/reports/sample.json`.",
        "",
        "| operation | requests | ops/s | p50 ms | p99 ms | errors | 429s |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        "| like | 1,200 | 120.0 | 20.3 | 80.5 | 0 | 0 |",
        "| all | 1,200 | 120.0 | 20.3 | 80.5 | 0 | 0 |",
        "",
      ].join("\n"),
    );
    expect(rendered.startsWith("intro\n\n<!-- figures:sample -->\nRun: ")).toBe(true);
    expect(rendered.endsWith("<!-- /figures -->\n\nafter\n")).toBe(true);
  });

  it("is found stale when a number in it is changed by hand, and rendering again puts it back", () => {
    const reports = new Map([["sample", sample]]);
    expect(staleFigures(rendered, reports)).toEqual([]);
    const edited = rendered.replace("| like | 1,200 | 120.0 |", "| like | 1,200 | 130.0 |");
    expect(edited).not.toBe(rendered);
    expect(staleFigures(edited, reports)).toEqual(["sample"]);
    expect(regenerate(edited, reports)).toBe(rendered);
  });

  it("still to take stays as it is until its report comes, then is rendered like any other", () => {
    const pending = "intro\n\n<!-- figures-pending:sample `npm run bench -- --scenario write --figure sample` -->\n| old | 1 |\n<!-- /figures -->\n";
    expect(pendingBlocks(pending)).toEqual([{ name: "sample", command: "npm run bench -- --scenario write --figure sample" }]);
    expect(staleFigures(pending, new Map())).toEqual([]);
    expect(regenerate(pending, new Map())).toBe(pending);
    const reports = new Map([["sample", sample]]);
    expect(staleFigures(pending, reports)).toEqual(["sample"]);
    const filled = regenerate(pending, reports);
    expect(filled).toBe(`intro\n\n<!-- figures:sample -->\n${renderFigure(sample)}<!-- /figures -->\n`);
    expect(staleFigures(filled, reports)).toEqual([]);
  });

  it("without a report is an error, not a table left as it was", () => {
    expect(staleFigures(doc, new Map())).toEqual(["sample"]);
    expect(() => regenerate(doc, new Map())).toThrow("no report bench/reports/sample.json");
  });

  it("catches a hand edit in every committed doc table", () => {
    for (const { doc: file, name } of blocks) {
      const text = docs.find((d) => d.doc === file)!.text;
      const body = figureBlocks(text).find((b) => b.name === name)!.body;
      const digit = body.search(/\| [0-9]/);
      expect(digit, `${file}: ${name} has no number`).toBeGreaterThan(0);
      const changed = body.slice(0, digit + 2) + (body[digit + 2] === "9" ? "8" : "9") + body.slice(digit + 3);
      expect(staleFigures(text.replace(body, changed), reports)).toContain(name);
    }
  });
});

describe("the costs figure of a write run", () => {
  const costs: Costs = {
    likes: 1269,
    perLike: {
      commits: 2.97,
      rowsWritten: 8.21,
      alarmsSet: 1.14,
      alarmsDeleted: 1.02,
      billedRows: 9.35,
      objectCalls: 2.98,
      queueMessages: 0.42,
      d1Queries: 2.71,
      d1Batches: 0.04,
      d1RowsWritten: 1.7,
      centralStoreWrites: 0,
    },
    byObject: {
      user_likes: { commits: 2.1, rowsWritten: 5.15, alarmsSet: 0.81, alarmsDeleted: 0.7 },
      item_counter: { commits: 0.88, rowsWritten: 3.06, alarmsSet: 0.33, alarmsDeleted: 0.32 },
      item_shard: { commits: 0, rowsWritten: 0, alarmsSet: 0, alarmsDeleted: 0 },
    },
  };
  const result = {
    passed: true,
    startedAt: sample.startedAt,
    options: { figure: "sample" },
    costs,
    criticalPath: { phases: 3, likeRequests: 1128, queries: 271, per100: 24.02, firstSights: 200, floorPer100: 17.73 },
    idle: null,
  };

  it("names the same run as the figure that run wrote, and sets each figure with a goal against it", () => {
    const report = costsReportOf(result, sample);
    expect(report.figure).toBe("sample-costs");
    expect([report.command, report.commit, report.startedAt, report.machine]).toEqual([sample.command, sample.commit, sample.startedAt, sample.machine]);
    const table = renderFigure(report);
    expect(table).toContain("| per like, over 1,269 likes and unlikes that changed an edge | user objects | item heads | item children | all | goal |");
    expect(table).toContain("| storage commits | 2.10 | 0.88 | 0.00 | 2.97 | at most 1.6: not met |");
    expect(table).toContain("| alarms deleted (not billed) | 0.70 | 0.32 | 0.00 | 1.02 |  |");
    expect(table).toContain("| billed object rows (rows written + alarms set) | 5.96 | 3.39 | 0.00 | 9.35 |  |");
    expect(table).toContain("| D1 batches (each one transaction and one round trip) |  |  |  | 0.04 |  |");
    expect(table).toContain("| billed rows, objects and D1 together |  |  |  | 11.05 | at most 6: not met |");
    expect(table).toContain("(1,128 requests, each phase's first second left out) |  |  |  | 24.02 | at most 1: not met |");
    expect(table).toContain("whose settings a first answer must read (200) |  |  |  | 17.73 |  |");
    expect(table).not.toContain("idle");
    // A report of a run before deletions and D1 batches were counted has no such rows, rather than rows of zeros.
    const { alarmsDeleted: _, d1Batches: __, ...uncounted } = costs.perLike;
    const before = renderFigure(costsReportOf({ ...result, costs: { ...costs, perLike: uncounted } }, sample));
    expect(before).not.toContain("alarms deleted");
    expect(before).not.toContain("D1 batches");
    // Counted from each phase's start when a warm-up came before it.
    const warmed = renderFigure(costsReportOf({ ...result, criticalPath: { ...result.criticalPath, fromStart: true } }, sample));
    expect(warmed).toContain("(1,128 requests, from each phase's start, after its warm-up) |  |  |  | 24.02 | at most 1: not met |");
    expect(warmed).not.toContain("first second");
  });

  it("shows the idle watch when the run kept one, and a goal met as met", () => {
    const idle = { seconds: 60, queueMessages: 0, alarmsSet: 0, alarmsRun: 0, commits: 0, objectCalls: 0 };
    const met = { ...result, idle, costs: { ...costs, perLike: { ...costs.perLike, commits: 1.5 } }, criticalPath: { ...result.criticalPath, per100: 0.5 } };
    const table = renderFigure(costsReportOf(met, sample));
    expect(table).toContain("| storage commits | 2.10 | 0.88 | 0.00 | 1.50 | at most 1.6: met |");
    expect(table).toContain("| 0.50 | at most 1: met |");
    expect(table).toContain("| idle for 60 s after the load, in all: queue messages sent |  |  |  | 0 |  |");
    expect(table).toContain("| idle: object calls |  |  |  | 0 |  |");
  });

  it("is refused for a run that did not pass or did not write that figure", () => {
    expect(() => costsReportOf({ ...result, passed: false }, sample)).toThrow("did not pass");
    expect(() => costsReportOf({ ...result, startedAt: "2026-12-03T14:00:00.000Z" }, sample)).toThrow("did not write bench/reports/sample.json");
    expect(() => costsReportOf({ ...result, options: { figure: "other" } }, sample)).toThrow("did not write");
  });
});

describe("the code a run measured (codeState)", () => {
  it("changes with an edit to a tracked file or a new file, and not with docs, reports or a commit", () => {
    const repo = mkdtempSync(join(tmpdir(), "plaudit-code-state-"));
    try {
      const git = (...args: string[]) => execFileSync("git", ["-c", "user.email=bench@plaudit.test", "-c", "user.name=bench", ...args], { cwd: repo });
      git("init", "-q");
      mkdirSync(join(repo, "workers"));
      mkdirSync(join(repo, "docs"));
      mkdirSync(join(repo, "bench/reports"), { recursive: true });
      writeFileSync(join(repo, "workers/a.ts"), "export const a = 1;\n");
      writeFileSync(join(repo, "docs/a.md"), "# a\n");
      git("add", ".");
      git("commit", "-qm", "a");
      const clean = codeState(repo);
      expect(clean).toMatch(/^[0-9a-f]{64}$/);

      writeFileSync(join(repo, "docs/a.md"), "# a, with its figure\n");
      writeFileSync(join(repo, "bench/reports/a.json"), "{}\n");
      expect(codeState(repo)).toBe(clean);

      writeFileSync(join(repo, "workers/a.ts"), "export const a = 2;\n");
      const edited = codeState(repo);
      expect(edited).not.toBe(clean);
      writeFileSync(join(repo, "workers/a.ts"), "export const a = 1;\n");
      expect(codeState(repo)).toBe(clean);

      writeFileSync(join(repo, "workers/b.ts"), "export const b = 1;\n");
      expect(codeState(repo)).not.toBe(clean);
      rmSync(join(repo, "workers/b.ts"));
      expect(codeState(repo)).toBe(clean);

      // What the run writes itself (an ignored folder) is not code; a deleted file is a change.
      writeFileSync(join(repo, ".gitignore"), "results/\n");
      git("add", ".gitignore");
      git("commit", "-qm", "ignore");
      const ignoring = codeState(repo);
      mkdirSync(join(repo, "results"));
      writeFileSync(join(repo, "results/run.json"), "{}\n");
      expect(codeState(repo)).toBe(ignoring);
      rmSync(join(repo, "workers/a.ts"));
      expect(codeState(repo)).not.toBe(ignoring);
      writeFileSync(join(repo, "workers/a.ts"), "export const a = 1;\n");
      expect(codeState(repo)).toBe(ignoring);

      // A commit of docs alone, and one of what the tree already held, change nothing the servers run.
      git("commit", "-qam", "docs");
      expect(codeState(repo)).toBe(ignoring);
      writeFileSync(join(repo, "workers/a.ts"), "export const a = 3;\n");
      const uncommitted = codeState(repo);
      git("commit", "-qam", "a = 3");
      expect(codeState(repo)).toBe(uncommitted);
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });

  it("is unknown outside a git work tree, so no figure is saved there", () => {
    const dir = mkdtempSync(join(tmpdir(), "plaudit-code-state-none-"));
    try {
      expect(codeState(dir)).toBe("unknown");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
