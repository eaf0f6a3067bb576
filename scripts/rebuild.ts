// `npm run rebuild -- --target d1|central|index [--url URL] [--rate KEYS_PER_SECOND]
//   [--batch N] [--checkpoint PATH] [--report PATH]`: recomputes a store from
// the objects, which hold the truth, through the service endpoint
// POST /v1/admin/rebuild (docs/rebuild.md).
// Resumable: a checkpoint (default .rebuild-<target>.checkpoint.json) is
// written after every step; a run killed anywhere goes on from it, and a
// finished one is started anew.
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { DEFAULT_REBUILD_BATCH, MAX_REBUILD_BATCH, REBUILD_TARGETS, type RebuildResponse, type RebuildTarget } from "../shared/rebuild";
import { runRebuild } from "../shared/rebuild-run";
import { pacer } from "./lib/import-cli";
import { jsonCheckpoint, rebuildProgressLine } from "./lib/rebuild-cli";
import { postService, serviceTokenOrExit } from "./lib/service-call";

const { values } = parseArgs({
  options: {
    target: { type: "string" },
    url: { type: "string", default: "http://127.0.0.1:8787" },
    rate: { type: "string", default: "200" },
    batch: { type: "string", default: String(DEFAULT_REBUILD_BATCH) },
    checkpoint: { type: "string" },
    report: { type: "string" },
  },
});
const target = values.target as RebuildTarget;
const batch = Number(values.batch);
if (!REBUILD_TARGETS.includes(target) || !Number.isInteger(batch) || batch < 1 || batch > MAX_REBUILD_BATCH || !(Number(values.rate) >= 0)) {
  console.error(`usage: npm run rebuild -- --target ${REBUILD_TARGETS.join("|")} [--url URL] [--rate KEYS_PER_SECOND (0: no limit)] [--batch 1..${MAX_REBUILD_BATCH}] [--checkpoint PATH] [--report PATH]`);
  process.exit(2);
}
const token = await serviceTokenOrExit();
const url = values.url.replace(/\/$/, "");
const checkpoint = jsonCheckpoint(values.checkpoint ?? `.rebuild-${target}.checkpoint.json`);
const started = Date.now();
const report = await runRebuild({
  target,
  limit: batch,
  send: (request) => postService<RebuildResponse>(url, "/v1/admin/rebuild", token, request),
  checkpoint,
  pace: pacer(Number(values.rate)),
  onProgress: rebuildProgressLine(started),
}).catch((error: unknown) => {
  process.stderr.write("\n");
  console.error(`The rebuild stopped: ${error instanceof Error ? error.message : String(error)}`);
  console.error("Run the same command again to go on from where it stood.");
  process.exit(1);
});
const seconds = (Date.now() - started) / 1_000;
process.stderr.write("\n");
if (values.report) writeFileSync(values.report, JSON.stringify({ url, seconds, ...report }, null, 2));
console.log(
  `${target}: ${report.checked} checked, ${report.written} written, ${report.unchanged} unchanged, ${report.repaired} repaired` +
    (target === "central" ? `; edges ${report.edges_written} written, ${report.edges_unchanged} unchanged` : "") +
    `; ${report.failed} failed, in ${report.steps} steps, ${seconds.toFixed(1)} s`,
);
for (const { key, error } of report.failures) console.log(`  ${key}: ${error}`);
if (report.failed > report.failures.length) console.log(`  ... and ${report.failed - report.failures.length} more`);
if (report.failed > 0) {
  console.log("Run the same command again to retry them: a rebuild is idempotent.");
  process.exitCode = 1;
}
