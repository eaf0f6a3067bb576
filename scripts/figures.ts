// npm run figures: renders every figure table in docs/ from its committed
// report in bench/reports/ (bench/lib/figures.ts), and lists the tables still
// to take with the command that writes each one's report. With --check it
// changes nothing and exits 1 when a table differs from its report.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { pendingBlocks, readReports, regenerate, staleFigures } from "../bench/lib/figures";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const check = process.argv.includes("--check");
const reports = readReports(join(root, "bench", "reports"));
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
