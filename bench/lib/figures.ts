// Figures that regenerate: a bench run writes a small report of one table
// (bench/reports/NAME.json, committed), and every doc table between
// `<!-- figures:NAME -->` and `<!-- /figures -->` is rendered from it, never
// typed by hand. `npm run figures` rewrites the tables; test/node/figures.test.ts
// fails when a table and its report disagree. A table whose run is still to
// take sits between `<!-- figures-pending:NAME `command` -->` and
// `<!-- /figures -->`: it names the command that writes its report, and the
// first `npm run figures` after that run renders it like any other.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpus, loadavg } from "node:os";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { CriticalPath, Report } from "./report";
import { billedWithD1, WRITE_GOALS, type Costs, type IdleWatch } from "./write-costs";

export type FigureColumn = { name: string; align: "left" | "right"; decimals?: number };
export type FigureCell = string | number | null;

/** One table of one run: its numbers, and the run that made them (the command and the commit it ran at). */
export type FigureReport = {
  figure: string;
  command: string;
  commit: string;
  startedAt: string;
  /** What else ran on the machine, as the run saw it (load average, cores). */
  machine: string;
  columns: FigureColumn[];
  rows: FigureCell[][];
};

export type FigureBlock = { name: string; body: string };
export type PendingBlock = { name: string; command: string };

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const NAME = /^[a-z0-9][a-z0-9-]*$/;
const BLOCK = /<!-- figures:([a-z0-9-]+) -->\n([\s\S]*?)<!-- \/figures -->/g;
const PENDING = /<!-- figures-pending:([a-z0-9-]+) `([^`]+)` -->\n[\s\S]*?<!-- \/figures -->/g;

function cell(value: FigureCell, column: FigureColumn): string {
  if (value === null) return "";
  if (typeof value === "string") return value;
  const decimals = column.decimals ?? 0;
  return value.toLocaleString("en-US", { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

/** The markdown a report's table renders to, with the line that names its run. */
export function renderFigure(report: FigureReport): string {
  const { columns } = report;
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [
    `Run: \`${report.command}\` at commit ${report.commit}, ${report.startedAt.slice(0, 10)} (${report.machine}); report \`bench/reports/${report.figure}.json\`.`,
    "",
    line(columns.map((c) => c.name)),
    line(columns.map((c) => (c.align === "right" ? "---:" : "---"))),
    ...report.rows.map((row) => line(columns.map((c, i) => cell(row[i] ?? null, c)))),
    "",
  ].join("\n");
}

/** The figure blocks of a markdown text, in order. */
export function figureBlocks(markdown: string): FigureBlock[] {
  return [...markdown.matchAll(BLOCK)].map((m) => ({ name: m[1]!, body: m[2]! }));
}

/** The tables still to take, each with the command that writes its report. */
export function pendingBlocks(markdown: string): PendingBlock[] {
  return [...markdown.matchAll(PENDING)].map((m) => ({ name: m[1]!, command: m[2]! }));
}

const rendered = (name: string, report: FigureReport) => `<!-- figures:${name} -->\n${renderFigure(report)}<!-- /figures -->`;

/**
 * The text with every figure block rendered from its report, and every
 * pending block whose report now exists rendered in its place; a figure
 * block whose report is missing is an error.
 */
export function regenerate(markdown: string, reports: ReadonlyMap<string, FigureReport>): string {
  return markdown
    .replace(BLOCK, (_, name: string) => {
      const report = reports.get(name);
      if (!report) throw new Error(`no report bench/reports/${name}.json for the figure block ${name}`);
      return rendered(name, report);
    })
    .replace(PENDING, (block, name: string) => {
      const report = reports.get(name);
      return report ? rendered(name, report) : block;
    });
}

/** The names of the blocks whose text differs from what their reports render, and of the pending blocks whose report has come. */
export function staleFigures(markdown: string, reports: ReadonlyMap<string, FigureReport>): string[] {
  const stale = figureBlocks(markdown).flatMap((block) => {
    const report = reports.get(block.name);
    return report && renderFigure(report) === block.body ? [] : [block.name];
  });
  return [...stale, ...pendingBlocks(markdown).flatMap((block) => (reports.has(block.name) ? [block.name] : []))];
}

export function readReports(dir: string): Map<string, FigureReport> {
  const reports = new Map<string, FigureReport>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".json")).sort()) {
    const report = JSON.parse(readFileSync(join(dir, file), "utf8")) as FigureReport;
    if (`${report.figure}.json` !== file) throw new Error(`${file} holds the figure ${report.figure}`);
    reports.set(report.figure, report);
  }
  return reports;
}

/**
 * The commit the working tree is at, marked `-dirty` when it holds changes a
 * run would measure too (docs and reports are not measured: a doc waiting for
 * its figure leaves the commit clean).
 */
export function currentCommit(root = ROOT): string {
  const git = (...args: string[]) => execFileSync("git", args, { cwd: root, encoding: "utf8" }).trim();
  try {
    const dirty = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)docs", ":(exclude)bench/reports") !== "";
    return `${git("rev-parse", "--short", "HEAD")}${dirty ? "-dirty" : ""}`;
  } catch {
    return "unknown";
  }
}

/**
 * What a run's servers are built from: the content of every file in the
 * working tree that git tracks or would (ignored files, docs and reports
 * aside), committed or not. `wrangler dev` rebuilds and reloads a server
 * when a file it was built from changes, silently and mid-run; a run whose
 * code state at its end is not the one at its start measured a server that
 * changed under it. A commit of what was already there changes nothing.
 */
export function codeState(root = ROOT): string {
  try {
    const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ".", ":(exclude)docs", ":(exclude)bench/reports"], {
      cwd: root,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    });
    const hash = createHash("sha256");
    for (const file of [...new Set(files.split("\0").filter(Boolean))].sort()) {
      hash.update(`${file}\0`);
      hash.update(existsSync(join(root, file)) ? readFileSync(join(root, file)) : "\0gone");
      hash.update("\0");
    }
    return hash.digest("hex");
  } catch {
    return "unknown";
  }
}

/** Writes a run's figure report: `name` must be a plain slug, as doc markers name it. */
export function writeFigureReport(dir: string, report: FigureReport): string {
  if (!NAME.test(report.figure)) throw new Error(`--figure must be lower-case letters, digits and dashes: ${report.figure}`);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${report.figure}.json`);
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
  return path;
}

/** The machine as a run saw it at its end: the line each report carries. */
export function machineNow(): string {
  return `${cpus().length} cores, load average ${loadavg().map((n) => n.toFixed(1)).join(" ")} at the end`;
}

/**
 * A figure report of any table a bench prints: `script` is the npm script
 * that ran (`bench`, `bench:import`), `argv` its arguments as given.
 */
export function tableFigure(
  figure: string,
  run: { script: string; argv: readonly string[]; commit: string; startedAt: string; machine: string },
  columns: FigureColumn[],
  rows: FigureCell[][],
): FigureReport {
  return { figure, command: `npm run ${run.script} -- ${run.argv.join(" ")}`, commit: run.commit, startedAt: run.startedAt, machine: run.machine, columns, rows };
}

type RunSummary = {
  perOp: Record<string, { count: number; opsPerSecond: number; p50: number; p99: number; errors: number; rejected: number }>;
  total: { count: number; opsPerSecond: number; p50: number; p99: number; errors: number; rejected: number };
};

/** The figure of a load run: requests, rate and latency per operation and in all, as the terminal table shows them. */
export function runFigure(
  figure: string,
  run: { argv: readonly string[]; commit: string; startedAt: string; machine: string; summary: RunSummary },
): FigureReport {
  const row = (name: string, s: RunSummary["total"]): FigureCell[] => [name, s.count, s.opsPerSecond, s.p50, s.p99, s.errors, s.rejected];
  return tableFigure(
    figure,
    { script: "bench", ...run },
    [
      { name: "operation", align: "left" },
      { name: "requests", align: "right" },
      { name: "ops/s", align: "right", decimals: 1 },
      { name: "p50 ms", align: "right", decimals: 1 },
      { name: "p99 ms", align: "right", decimals: 1 },
      { name: "errors", align: "right" },
      { name: "429s", align: "right" },
    ],
    [...Object.entries(run.summary.perOp).map(([name, s]) => row(name, s)), row("all", run.summary.total)],
  );
}

/** A figure of a run with --reference: rows of bench/lib/reference.ts (the comparison's, or the like reference's table), header first. */
export function referenceFigure(figure: string, run: { argv: readonly string[]; commit: string; startedAt: string; machine: string }, rows: string[][], leftColumns = 2): FigureReport {
  const [header = [], ...body] = rows;
  const columns = header.map((name, i): FigureColumn => ({ name, align: i < leftColumns ? "left" : "right" }));
  return tableFigure(figure, { script: "bench", ...run }, columns, body);
}

/**
 * The second figure of a run that writes (`--figure NAME` writes it as
 * NAME-costs): per like that changed an edge, by object kind and in all,
 * the critical path's D1 queries, each set against its goal where it has
 * one, and the idle watch when the run kept one.
 */
export function costsFigure(costs: Costs, criticalPath: CriticalPath, idle: IdleWatch | null): { columns: FigureColumn[]; rows: FigureCell[][] } {
  const p = costs.perLike;
  const [user, head, child] = (["user_likes", "item_counter", "item_shard"] as const).map((kind) => costs.byObject[kind] ?? { commits: 0, rowsWritten: 0, alarmsSet: 0, alarmsDeleted: 0 });
  const objects = [user!, head!, child!];
  const verdict = (value: number, goal: number) => `at most ${goal}: ${value <= goal ? "met" : "not met"}`;
  const total = (name: string, value: number, goal: string | null = null): FigureCell[] => [name, null, null, null, value, goal];
  const count = (name: string, value: number): FigureCell[] => [name, null, null, null, String(value), null];
  return {
    columns: [
      { name: `per like, over ${costs.likes.toLocaleString("en-US")} likes and unlikes that changed an edge`, align: "left" },
      { name: "user objects", align: "right", decimals: 2 },
      { name: "item heads", align: "right", decimals: 2 },
      { name: "item children", align: "right", decimals: 2 },
      { name: "all", align: "right", decimals: 2 },
      { name: "goal", align: "left" },
    ],
    rows: [
      ["storage commits", ...objects.map((o) => o.commits), p.commits, verdict(p.commits, WRITE_GOALS.commits)],
      ["rows written", ...objects.map((o) => o.rowsWritten), p.rowsWritten, null],
      ["alarms set", ...objects.map((o) => o.alarmsSet), p.alarmsSet, null],
      ...(p.alarmsDeleted === undefined ? [] : [["alarms deleted (not billed)", ...objects.map((o) => o.alarmsDeleted ?? 0), p.alarmsDeleted, null]]),
      ["billed object rows (rows written + alarms set)", ...objects.map((o) => Math.round((o.rowsWritten + o.alarmsSet) * 100) / 100), p.billedRows, null],
      total("D1 rows written", p.d1RowsWritten),
      ...(p.d1Batches === undefined ? [] : [total("D1 batches (each one transaction and one round trip)", p.d1Batches)]),
      total("billed rows, objects and D1 together", billedWithD1(costs), verdict(billedWithD1(costs), WRITE_GOALS.billedRows)),
      total("object calls", p.objectCalls),
      total("queue messages sent", p.queueMessages),
      total("central-store writes", p.centralStoreWrites),
      total(
        `D1 queries a like's answer waited for, per 100 like and unlike requests (${criticalPath.likeRequests.toLocaleString("en-US")} requests, ${criticalPath.fromStart ? "from each phase's start, after its warm-up" : "each phase's first second left out"})`,
        criticalPath.per100,
        verdict(criticalPath.per100, WRITE_GOALS.criticalPer100),
      ),
      total(
        `of those, the floor: first sights, items no request had named within PRIVACY_STALE_MS, whose settings a first answer must read (${criticalPath.firstSights.toLocaleString("en-US")})`,
        criticalPath.floorPer100,
      ),
      ...(idle
        ? [
            count(`idle for ${idle.seconds} s after the load, in all: queue messages sent`, idle.queueMessages),
            count("idle: alarms set", idle.alarmsSet),
            count("idle: alarms run", idle.alarmsRun),
            count("idle: storage commits", idle.commits),
            count("idle: object calls", idle.objectCalls),
          ]
        : []),
    ],
  };
}

/**
 * The costs figure of a write run, from its JSON report (bench/results/) and
 * the figure that same run wrote: the command, commit and machine are that
 * figure's, so both tables name one run.
 */
export function costsReportOf(result: Pick<Report, "passed" | "startedAt" | "options" | "costs" | "criticalPath" | "idle">, figure: FigureReport): FigureReport {
  if (!result.passed) throw new Error(`the run of ${result.startedAt} did not pass: it has no figure`);
  if (result.options.figure !== figure.figure || result.startedAt !== figure.startedAt) {
    throw new Error(`the run of ${result.startedAt} did not write bench/reports/${figure.figure}.json (${figure.startedAt})`);
  }
  return { ...figure, figure: `${figure.figure}-costs`, ...costsFigure(result.costs, result.criticalPath, result.idle) };
}

/** The code this process began with (codeState): taken when a bench script loads this module, before it starts a server. */
const codeAtLoad = codeState();

/** Why this run's figures cannot be saved, or null: the code it ran is unknown, or changed since the run began. */
export function figureRefusal(): string | null {
  const now = codeState();
  if (now === "unknown" || codeAtLoad === "unknown") return "no figure saved: which code ran cannot be told (git ls-files failed)";
  if (now !== codeAtLoad) return "no figure saved: the code changed during the run (wrangler dev rebuilds and reloads a server on an edit, mid-run)";
  return null;
}

/** Writes `report` to the repository's bench/reports/, where docs render it from, and says where; refuses (throws) for a run whose code changed under it. */
export function saveFigure(report: FigureReport): void {
  const refused = figureRefusal();
  if (refused) throw new Error(`${report.figure}: ${refused}`);
  console.log(`figure: ${writeFigureReport(join(ROOT, "bench", "reports"), report)} (npm run figures renders it into docs/)`);
}
