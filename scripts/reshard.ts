// `npm run reshard -- --databases K [--url URL] [--batch N]`: moves the items'
// counts and settings to a layout of K count databases while the service
// serves, through the service endpoint POST /v1/admin/reshard (docs/reads.md,
// "Resharding"; docs/operations.md). The service stores where the reshard
// stands: stop this at any time (Ctrl-C) and run the same command again to
// go on; run against a finished reshard it changes nothing.
import { parseArgs } from "node:util";
import { MAX_COUNT_DATABASES, MAX_RESHARD_BATCH, DEFAULT_RESHARD_BATCH, type ReshardResponse } from "../shared/reshard";
import { runReshard } from "../shared/reshard-run";
import { postService, serviceTokenOrExit } from "./lib/service-call";

const { values } = parseArgs({
  options: {
    databases: { type: "string" },
    url: { type: "string", default: "http://127.0.0.1:8787" },
    batch: { type: "string", default: String(DEFAULT_RESHARD_BATCH) },
  },
});
const databases = Number(values.databases);
const batch = Number(values.batch);
if (!Number.isInteger(databases) || databases < 1 || databases > MAX_COUNT_DATABASES || !Number.isInteger(batch) || batch < 1 || batch > MAX_RESHARD_BATCH) {
  console.error(`usage: npm run reshard -- --databases 1..${MAX_COUNT_DATABASES} [--url URL] [--batch 1..${MAX_RESHARD_BATCH}]`);
  process.exit(2);
}
const token = await serviceTokenOrExit();
const url = values.url.replace(/\/$/, "");
const started = Date.now();
const PHASE_NAMES: Record<ReshardResponse["phase"], string> = {
  dual: "1/4 dual writes",
  copy: "2/4 copy",
  switch: "3/4 switch, verify",
  cleanup: "4/4 cleanup",
  done: "done",
};

/** One line on stderr, redrawn in place: the phase, a bar of the rows it went through, what moved, and any wait. */
function progressLine(step: ReshardResponse): void {
  const share = step.total > 0 ? Math.min(1, step.visited / step.total) : step.phase === "done" ? 1 : 0;
  const width = 30;
  const bar = "#".repeat(Math.round(share * width)).padEnd(width, ".");
  const wait = step.wait_ms > 0 ? `  waiting ${(step.wait_ms / 1_000).toFixed(0)} s for every isolate to see the phase` : "";
  process.stderr.write(
    `\r${step.from} -> ${step.to} databases  ${PHASE_NAMES[step.phase].padEnd(18)} [${bar}] ${(share * 100).toFixed(1)}%  ${step.visited}/${step.total} rows  repaired ${step.repaired}${wait}   `,
  );
}

const result = await runReshard({
  databases,
  limit: batch,
  send: (request) => postService<ReshardResponse>(url, "/v1/admin/reshard", token, request),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  onProgress: progressLine,
}).catch((error: unknown) => {
  process.stderr.write("\n");
  console.error(`The reshard stopped: ${error instanceof Error ? error.message : String(error)}`);
  console.error("Run the same command again to go on from where it stands.");
  process.exit(1);
});
process.stderr.write("\n");
console.log(
  `The counts are in ${result.to} count databases: ${result.total} rows gone through, ${result.repaired} repaired by the verification, in ${result.steps} steps, ${((Date.now() - started) / 1_000).toFixed(1)} s.`,
);
