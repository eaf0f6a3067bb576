// The run's report: a table on the terminal, and a JSON and a self-contained
// HTML file (inline SVG charts, no scripts, no CDN) under bench/results/.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Costs, IdleWatch } from "./write-costs";
import type { HotItemShare } from "./plaudit";
import { medianLine, referenceRows, yardstickRows, type ReferenceComparison } from "./reference";
import { alignedRows } from "./text-table";
import { PERCENTILES, type Summary } from "./recorder";

export type Report = {
  scenario: string;
  description: string;
  passed: boolean;
  startedAt: string;
  seconds: number;
  options: Record<string, unknown>;
  environment: Record<string, unknown>;
  summary: Summary;
  checks: {
    violationCount: number;
    violations: string[];
    errorRate: number;
    errorSamples: string[];
    converged: boolean;
    convergenceMs: number;
    mismatches: unknown[];
    negatives: string[];
    itemsChecked: number;
    outboxesDrained: boolean | null;
    /** With --warm-up: the warm-ups' requests, off the clock but held to the same error rate. */
    warmUp?: { requests: number; errors: number; errorRate: number; errorSamples: string[] };
  };
  /**
   * How the hot item's writes were spread over its head and children (null when it was not written): over
   * the head's life (its own figures restart with it) and on the clock (the timed phases only).
   */
  hotItem: (HotItemShare & { headCommitsOnClock: number; headAppliesOnClock: number; writesOnClock: number }) | null;
  /** Object calls, D1 queries and D1 rows read per read request, from /metrics (null without a service token). */
  readCosts: { requests: number; objectCalls: number; d1Queries: number; d1RowsRead: number } | null;
  /** How long a like took to reach the regional store, under the run's load. */
  storeLag: { samples: number; lost: number; p50: number; p99: number; max: number };
  /** With --reference: each round's phases and ratios, and the median ratios over the rounds. */
  reference: ReferenceComparison | null;
  /** Per-like costs from /metrics deltas over the run (and its convergence). */
  costs: Costs;
  /** What the system did while idle after the load (null: not watched). */
  idle: IdleWatch | null;
  /**
   * D1 queries a write's answer waited for (`path="critical"`), per like or
   * unlike request, counted from the first second of each timed phase on,
   * or from its start after a warm-up (`fromStart`);
   * `firstSights`: items those phases' requests named that the isolate had
   * not met within PRIVACY_STALE_MS, each one settings read at least.
   */
  criticalPath: CriticalPath;
};

export type CriticalPath = {
  phases: number;
  likeRequests: number;
  queries: number;
  per100: number;
  firstSights: number;
  floorPer100: number;
  /** Counted from each phase's start (a warm-up before it); absent or false: from its second second. */
  fromStart?: boolean;
};

export function summaryTable(report: Report): string {
  const rows = [["operation", "count", "ops/s", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms", "errors", "429s"]];
  for (const [name, s] of Object.entries(report.summary.perOp)) {
    rows.push([name, s.count, s.opsPerSecond, s.p50, s.p90, s.p99, s.p999, s.max, s.errors, s.rejected].map(String));
  }
  const t = report.summary.total;
  rows.push(["all", t.count, t.opsPerSecond, t.p50, "", t.p99, "", "", t.errors, t.rejected].map(String));
  const c = report.checks;
  return [
    ...alignedRows(rows),
    "",
    `exactness: ${c.violationCount} wrong statuses or reads; ${c.itemsChecked} items checked after the run, ` +
      `${c.converged ? `converged in ${c.convergenceMs} ms` : `${c.mismatches.length} wrong counts`}` +
      (c.outboxesDrained === null ? "" : `; outboxes ${c.outboxesDrained ? "drained" : "NOT drained"}`),
    ...(c.warmUp ? [`warm-ups, off the clock: ${c.warmUp.requests} requests, ${c.warmUp.errors} errors`] : []),
    `result: ${report.passed ? "PASS" : "FAIL"}`,
  ].join("\n");
}

export function writeReports(report: Report, dir: string): { json: string; html: string } {
  mkdirSync(dir, { recursive: true });
  const stamp = report.startedAt.replace(/[:.]/g, "-");
  const base = join(dir, `${report.scenario}-${stamp}`);
  writeFileSync(`${base}.json`, JSON.stringify(report, null, 2));
  writeFileSync(`${base}.html`, html(report));
  return { json: `${base}.json`, html: `${base}.html` };
}

const COLORS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2"];

export const escape = (s: string) => s.replace(/[&<>"]/g, (ch) => `&#${ch.charCodeAt(0)};`);

export type Series = { name: string; points: [number, number][] };

/** A line chart as inline SVG; x positions are given, labels are optional. */
export function lineChart(title: string, series: Series[], xLabels: [number, string][], yUnit: string): string {
  const W = 720, H = 300, L = 60, R = 150, T = 30, B = 40;
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = series.flatMap((s) => s.points.map((p) => p[1]));
  const xMin = Math.min(0, ...xs), xMax = Math.max(1, ...xs);
  const yMax = Math.max(1, ...ys) * 1.1;
  const sx = (x: number) => L + ((x - xMin) / (xMax - xMin || 1)) * (W - L - R);
  const sy = (y: number) => H - B - (y / yMax) * (H - T - B);
  const grid = [0, 0.25, 0.5, 0.75, 1].map((f) => {
    const y = yMax * f;
    return `<line x1="${L}" x2="${W - R}" y1="${sy(y)}" y2="${sy(y)}" stroke="#e5e7eb"/>` +
      `<text x="${L - 6}" y="${sy(y) + 4}" text-anchor="end">${y < 10 ? y.toFixed(1) : Math.round(y)}</text>`;
  });
  const ticks = xLabels.map(([x, label]) => `<text x="${sx(x)}" y="${H - B + 16}" text-anchor="middle">${escape(label)}</text>`);
  const lines = series.map((s, i) => {
    const color = COLORS[i % COLORS.length];
    const d = s.points.map(([x, y], j) => `${j === 0 ? "M" : "L"}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join("");
    const dots = s.points.length < 20 ? s.points.map(([x, y]) => `<circle cx="${sx(x)}" cy="${sy(y)}" r="3" fill="${color}"/>`).join("") : "";
    return `<path d="${d}" fill="none" stroke="${color}" stroke-width="2"/>${dots}` +
      `<rect x="${W - R + 12}" y="${T + i * 18}" width="10" height="10" fill="${color}"/>` +
      `<text x="${W - R + 28}" y="${T + i * 18 + 9}">${escape(s.name)}</text>`;
  });
  return `<figure><figcaption>${escape(title)}</figcaption>` +
    `<svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" font-size="11" font-family="sans-serif" role="img">` +
    `${grid.join("")}${ticks.join("")}<text x="14" y="${T - 10}">${escape(yUnit)}</text>${lines.join("")}</svg></figure>`;
}

/** The comparison with the reference Workers: the terminal's tables, and the median line. */
function referenceHtml(comparison: ReferenceComparison): string {
  const row = (cells: string[], tag: "th" | "td") => `<tr>${cells.map((c) => `<${tag}>${escape(c)}</${tag}>`).join("")}</tr>`;
  const table = ([header, ...rows]: string[][]) => `<table>${row(header!, "th")}${rows.map((r) => row(r, "td")).join("")}</table>`;
  const ladder = yardstickRows(comparison);
  return `<h2>Reference Workers</h2>
<p>The same scenario against the reference Workers of <code>bench/reference/</code>, ${comparison.rounds} rounds taking turns with plaudit (plaudit first in odd rounds, last in even ones). MEDIAN rows: each column's own median over the rounds.</p>
${table(referenceRows(comparison))}
<p><strong>${escape(medianLine(comparison))}</strong></p>${
    ladder.length > 0 ? `\n<p>Against the one-commit like: the median over the rounds of each round's ratio.</p>\n${table(ladder)}` : ""
  }`;
}

function html(report: Report): string {
  const { summary, checks } = report;
  const ops = Object.keys(summary.perOp);
  const perSecond = (op: string | null) =>
    summary.timeline.map((s): [number, number] => [s.t + 1, op ? (s.ops[op] ?? 0) : Object.values(s.ops).reduce((a, b) => a + b, 0)]);
  const throughput: Series[] = [
    ...(ops.length > 1 ? [{ name: "all", points: perSecond(null) }] : []),
    ...ops.map((op) => ({ name: op, points: perSecond(op) })),
  ];
  const step = Math.max(1, Math.ceil(summary.timeline.length / 10));
  const timeTicks = summary.timeline.filter((s) => s.t % step === 0).map((s): [number, string] => [s.t + 1, `${s.t + 1}s`]);
  const latency: Series[] = ops.map((op) => ({
    name: op,
    points: PERCENTILES.map((p, i) => [i, summary.perOp[op]!.curve[String(p)] ?? 0]),
  }));
  const pTicks = PERCENTILES.map((p, i): [number, string] => [i, p === 100 ? "max" : `p${p}`]);
  const rows = Object.entries(summary.perOp)
    .map(([name, s]) => `<tr><td>${escape(name)}</td>${[s.count, s.opsPerSecond, s.p50, s.p90, s.p99, s.p999, s.max, s.errors, s.rejected].map((v) => `<td>${v}</td>`).join("")}</tr>`)
    .join("") +
    `<tr><td>all</td>${[summary.total.count, summary.total.opsPerSecond, summary.total.p50, "", summary.total.p99, "", "", summary.total.errors, summary.total.rejected].map((v) => `<td>${v}</td>`).join("")}</tr>`;
  const violations = checks.violations.map((v) => `<li>${escape(v)}</li>`).join("");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>plaudit bench: ${escape(report.scenario)}</title>
<style>body{font:14px/1.4 sans-serif;margin:2em;max-width:960px}table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:4px 8px;text-align:right}td:first-child,th:first-child{text-align:left}.pass{color:#16a34a}.fail{color:#dc2626}figcaption{font-weight:bold;margin:1em 0 .3em}pre{background:#f6f6f6;padding:.6em;overflow:auto}</style></head><body>
<h1>plaudit bench: ${escape(report.scenario)} <span class="${report.passed ? "pass" : "fail"}">${report.passed ? "PASS" : "FAIL"}</span></h1>
<p>${escape(report.description)}</p>
<p>${escape(report.startedAt)}, ${report.seconds} s timed${report.reference ? ` (plaudit's ${report.reference.rounds} rounds together, back to back in the charts)` : ""}. Measured on the machine below, with the load generator on the same machine: these are local figures, not Cloudflare's.</p>
<table><tr><th>operation</th><th>count</th><th>ops/s</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>max ms</th><th>errors</th><th>429s</th></tr>${rows}</table>
${lineChart("Throughput over time (successful operations per second)", throughput, timeTicks, "ops/s")}
${lineChart("Latency percentiles over the whole run", latency, pTicks, "ms")}
<h2>Exactness</h2>
<p>${checks.violationCount} wrong statuses or reads during the run; ${checks.itemsChecked} items checked after it: ${checks.converged ? `every count converged in ${checks.convergenceMs} ms` : `${checks.mismatches.length} wrong counts`}${checks.outboxesDrained === null ? "" : `; outboxes ${checks.outboxesDrained ? "drained" : "not drained"}`}.${checks.warmUp ? ` Warm-ups, off the clock: ${checks.warmUp.requests} requests, ${checks.warmUp.errors} errors.` : ""}</p>
${violations ? `<ul>${violations}</ul>` : ""}
${report.reference ? referenceHtml(report.reference) : ""}
<h2>Run</h2><pre>${escape(JSON.stringify({ options: report.options, environment: report.environment }, null, 2))}</pre>
</body></html>
`;
}
