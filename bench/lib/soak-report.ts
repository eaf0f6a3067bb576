// The soak's report: JSON, and a self-contained HTML page (inline SVG, no
// scripts, no CDN) with throughput, latency, errors, memory and queue lag
// over time, and what each kill and each reconciliation found.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { escape, lineChart, type Series } from "./report";
import type { SoakResult } from "./soak-run";

export type SoakReport = SoakResult & { startedAt: string; options: Record<string, unknown>; environment: Record<string, unknown> };

const minutes = (t: number) => `${(t / 60).toFixed(t < 600 ? 1 : 0)} min`;

export function soakSummary(report: SoakReport): string {
  const converge = report.kills.map((k) => k.convergenceMs);
  const rss = report.samples.map((s) => s.rssMb);
  const drifts = report.reconciliations.map((r) => r.driftRatio ?? 0);
  return [
    `soak: ${report.minutes} min, ${report.totals.operations} operations, ${report.totals.errors} errors, ${report.kills.length} kills`,
    `kills: restart ${report.kills.map((k) => k.restartMs).join(", ") || "-"} ms; converged after ${converge.join(", ") || "-"} ms`,
    `exactness: ${report.violations.length} violations, ${report.negatives.length} negative counts, ` +
      `${[...report.kills, report.final].filter((k) => !(k.converged && k.storesAgree && k.drained)).length} checks not exact; ` +
      `${report.totals.items} items, ${report.totals.likes} likes at the end`,
    `reconciliation: ${report.reconciliations.length} runs, largest drift ${Math.max(0, ...drifts)}`,
    `server memory: ${rss.length ? `${Math.min(...rss)} to ${Math.max(...rss)} MB (first ${rss[0]}, last ${rss.at(-1)})` : "not sampled"}`,
    `result: ${report.passed ? "PASS" : "FAIL"}`,
  ].join("\n");
}

export function writeSoakReports(report: SoakReport, dir: string): { json: string; html: string } {
  mkdirSync(dir, { recursive: true });
  const base = join(dir, `soak-${report.startedAt.replace(/[:.]/g, "-")}`);
  writeFileSync(`${base}.json`, JSON.stringify(report, null, 2));
  writeFileSync(`${base}.html`, html(report));
  return { json: `${base}.json`, html: `${base}.html` };
}

function html(report: SoakReport): string {
  const at = (pick: (s: SoakReport["samples"][number]) => number | null): [number, number][] =>
    report.samples.flatMap((s) => {
      const v = pick(s);
      return v === null ? [] : [[s.t, v] as [number, number]];
    });
  const step = Math.max(60, Math.ceil((report.samples.at(-1)?.t ?? 60) / 10 / 60) * 60);
  const ticks: [number, string][] = [];
  for (let t = 0; t <= (report.samples.at(-1)?.t ?? 0); t += step) ticks.push([t, minutes(t)]);
  const killMarks: Series = { name: "kill", points: report.kills.map((k) => [k.atSecond, 0]) };
  const rows = [...report.kills, report.final]
    .map(
      (k, i) =>
        `<tr><td>${i < report.kills.length ? `kill ${i + 1}` : "end"}</td><td>${minutes(k.atSecond)}</td><td>${k.restartMs}</td><td>${k.convergenceMs}</td>` +
        `<td>${k.converged ? "yes" : "no"}</td><td>${k.storesAgree ? "yes" : "no"}</td><td>${k.drained ? "yes" : "no"}</td></tr>`,
    )
    .join("");
  const problems = [...report.violations, ...report.negatives.map((n) => `negative count: ${n}`), ...report.kills.flatMap((k) => k.disagreements)]
    .map((v) => `<li>${escape(v)}</li>`)
    .join("");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>plaudit soak</title>
<style>body{font:14px/1.4 sans-serif;margin:2em;max-width:960px}table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:4px 8px;text-align:right}td:first-child,th:first-child{text-align:left}.pass{color:#16a34a}.fail{color:#dc2626}figcaption{font-weight:bold;margin:1em 0 .3em}pre{background:#f6f6f6;padding:.6em;overflow:auto}</style></head><body>
<h1>plaudit soak <span class="${report.passed ? "pass" : "fail"}">${report.passed ? "PASS" : "FAIL"}</span></h1>
<p>${escape(report.startedAt)}: ${report.minutes} minutes against a local server on this machine (figures are local, not Cloudflare's), killed with SIGKILL every ${escape(String(report.options.killEveryMinutes))} minutes and restarted on the same state.</p>
<pre>${escape(soakSummary(report))}</pre>
${lineChart("Throughput (operations per second, 10 s samples)", [{ name: "ops/s", points: at((s) => s.ops) }, killMarks], ticks, "ops/s")}
${lineChart("Latency (10 s samples)", [{ name: "p50", points: at((s) => s.p50) }, { name: "p99", points: at((s) => s.p99) }], ticks, "ms")}
${lineChart("Errors per 10 s", [{ name: "errors", points: at((s) => s.errors) }, killMarks], ticks, "errors")}
${lineChart("Server memory (every process of the group)", [{ name: "RSS", points: at((s) => s.rssMb) }], ticks, "MB")}
${lineChart("Queue lag", [{ name: "aggregator lag", points: at((s) => s.queueLagSeconds) }], ticks, "s")}
${lineChart("Drift found by reconciliation", [{ name: "drift ratio", points: report.reconciliations.map((r) => [r.atSecond, r.driftRatio ?? 0]) }], ticks, "ratio")}
<h2>After each kill</h2>
<table><tr><th></th><th>at</th><th>restart ms</th><th>converged after ms</th><th>D1 exact</th><th>objects and central store exact</th><th>outboxes drained</th></tr>${rows}</table>
${problems ? `<h2>Problems</h2><ul>${problems}</ul>` : ""}
<h2>Run</h2><pre>${escape(JSON.stringify({ options: report.options, environment: report.environment }, null, 2))}</pre>
</body></html>
`;
}
