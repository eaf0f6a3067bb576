// npm run figures: renders every figure table in docs/ from its committed
// report in bench/reports/ (bench/lib/figures.ts), and lists the tables still
// to take with the command that writes each one's report. With --check it
// changes nothing and exits 1 when a table differs from its report. With
// --costs FILE... it writes, from a write run's JSON report in bench/results/,
// the costs figure (NAME-costs) beside the figure NAME that run wrote.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { costsReportOf, pendingBlocks, readReports, regenerate, staleFigures, writeFigureReport } from "../bench/lib/figures";
import type { Report } from "../bench/lib/report";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const dir = join(root, "bench", "reports");
const check = process.argv.includes("--check");
const reports = readReports(dir);
if (process.argv.includes("--costs")) {
  for (const file of process.argv.slice(2).filter((arg) => arg.endsWith(".json"))) {
    const result = JSON.parse(readFileSync(file, "utf8")) as Report;
    const figure = reports.get(String(result.options.figure));
    if (!figure) throw new Error(`${file}: no bench/reports/${String(result.options.figure)}.json from the same run`);
    console.log(`figure: ${writeFigureReport(dir, costsReportOf(result, figure))}`);
  }
  process.exit(0);
}
let stale = 0;
for (const doc of readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md"))) {
  const path = join(root, "docs", doc);
  const text = readFileSync(path, "utf8");
  for (const { name, command } of pendingBlocks(text)) if (!reports.has(name)) console.log(`docs/${doc}: ${name} still to take: ${command}`);
  const names = staleFigures(text, reports);
  if (names.length === 0) continue;
  stale += names.length;
  if (check) console.error(`docs/${doc}: ${names.join(", ")} differ from their reports`);
  else {
    writeFileSync(path, regenerate(text, reports));
    console.log(`docs/${doc}: rendered ${names.join(", ")}`);
  }
}
if (check && stale > 0) process.exitCode = 1;
