// `npm run import -- --file likes.ndjson [--format ndjson|csv] [--url URL]
//   [--rate EDGES_PER_SECOND] [--parallel N] [--batch N] [--checkpoint PATH] [--report PATH]`:
// brings like edges from another system into plaudit through the service
// endpoint POST /v1/admin/import (docs/import.md). Lines are NDJSON objects
// or CSV rows (with a header) of user_id, item_id, item_type, liked_at, kind.
// Up to --parallel batches in flight, fewer while the server pushes back (503
// or 429 with a Retry-After: its queues are full or an object failed), and at
// most --rate edges a second.
// Resumable: a checkpoint (default <file>.checkpoint.json) is written after
// every batch, and a second run of a finished file changes nothing.
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { writeFileSync } from "node:fs";
import { runImport } from "../shared/import-run";
import { batchSender, fileCheckpoint, fileLines, fileSize, pacer, progressBar } from "./lib/import-cli";
import { serviceTokenOrExit } from "./lib/service-call";

const { values } = parseArgs({
  options: {
    file: { type: "string" },
    format: { type: "string" },
    url: { type: "string", default: "http://127.0.0.1:8787" },
    rate: { type: "string", default: "500" },
    batch: { type: "string", default: "100" },
    parallel: { type: "string", default: "4" },
    checkpoint: { type: "string" },
    report: { type: "string" },
  },
});
if (!values.file) {
  console.error("usage: npm run import -- --file likes.ndjson|likes.csv [--url URL] [--rate EDGES_PER_SECOND] [--parallel N] [--batch N] [--checkpoint PATH]");
  process.exit(2);
}
const file = resolve(values.file);
const format = values.format ?? (file.endsWith(".csv") ? "csv" : "ndjson");
if (format !== "csv" && format !== "ndjson") {
  console.error("--format must be ndjson or csv");
  process.exit(2);
}
const token = await serviceTokenOrExit();
const size = fileSize(file);
const checkpoint = fileCheckpoint(values.checkpoint ?? `${file}.checkpoint.json`, { file, size });
const resumed = await checkpoint.load();
const bytesRead = { value: 0 };
const started = Date.now();
const report = await runImport({
  lines: fileLines(file, bytesRead),
  format,
  send: batchSender(values.url.replace(/\/$/, ""), token),
  checkpoint,
  batchSize: Number(values.batch),
  parallel: Number(values.parallel),
  pace: pacer(Number(values.rate)),
  onProgress: progressBar(size, bytesRead, resumed?.line ?? 0),
});
const seconds = (Date.now() - started) / 1_000;
process.stderr.write("\n");
const summary = { file, format, resumed_at_line: resumed?.line ?? 0, seconds, ...report };
if (values.report) writeFileSync(values.report, JSON.stringify(summary, null, 2));
console.log(
  `lines read ${report.read}, applied ${report.applied}, duplicates ${report.duplicates}, superseded by newer actions ${report.superseded}, refused ${report.refused} in ${seconds.toFixed(1)} s`,
);
for (const { line, reason } of report.refusals) console.log(`  line ${line}: ${reason}`);
if (report.refused > report.refusals.length) console.log(`  ... and ${report.refused - report.refusals.length} more refused lines`);
