// `npm run bench:import -- [--edges 100000] [--users 2000] [--items 5000] [--rate 0] [--parallel 4] [--seconds 300]`:
// starts its own local plaudit, writes an NDJSON file of like edges sorted by
// user (as a dump of a user_likes table comes), imports it through the same
// parts as `npm run import` and prints the import rate, the time until every
// store caught up, and the per-edge costs from /metrics. Traffic goes to
// 127.0.0.1 only; --seconds bounds the run (a cut-off run says so).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Backpressure } from "../shared/import-flow";
import { runImport } from "../shared/import-run";
import { batchSender, fileCheckpoint, fileLines, fileSize, pacer } from "../scripts/lib/import-cli";
import { HttpClient } from "./lib/http";
import { idRange, serviceToken } from "./lib/plaudit";
import { removeStateDir, startServer } from "./lib/server";
import { costsBetween, costsTable, settledMetrics, untilSwept } from "./lib/write-costs";
import { currentCommit, machineNow, saveFigure, tableFigure } from "./lib/figures";

const { values } = parseArgs({
  options: {
    edges: { type: "string", default: "100000" },
    users: { type: "string", default: "2000" },
    items: { type: "string", default: "5000" },
    rate: { type: "string", default: "0" },
    parallel: { type: "string", default: "4" },
    seconds: { type: "string", default: "300" },
    figure: { type: "string" },
  },
});
const [edges, userCount, itemCount] = [Number(values.edges), Number(values.users), Number(values.items)];
// A shared machine may take minutes to bring wrangler up.
const server = await startServer({ readyTimeoutMs: 300_000 });
try {
  const file = join(server.stateDir, "likes.ndjson");
  const users = idRange(userCount);
  const items = idRange(itemCount, 10n ** 9n);
  const lines: string[] = [];
  const base = Date.UTC(2024, 0, 1);
  for (let i = 0; i < edges; i++) {
    const user = users[Math.floor((i * userCount) / edges)]!;
    lines.push(JSON.stringify({ user_id: user, item_id: items[(i * 7919) % itemCount], item_type: "post", liked_at: base + i * 1_000, kind: "like" }));
  }
  writeFileSync(file, `${lines.join("\n")}\n`);

  const http = new HttpClient(server.url, 4);
  const service = await serviceToken(server.secret);
  const before = await settledMetrics(http, service);
  const deadline = Date.now() + Number(values.seconds) * 1_000;
  const bytesRead = { value: 0 };
  const started = Date.now();
  let slowed = 0;
  const send = batchSender(server.url, service);
  const checkpoint = fileCheckpoint(`${file}.checkpoint.json`, { file, size: fileSize(file) });
  const finished = await runImport({
    lines: fileLines(file, bytesRead),
    format: "ndjson",
    send: async (batch) => {
      if (Date.now() > deadline) throw new Error("cut off by --seconds");
      try {
        return await send(batch);
      } catch (error) {
        if (error instanceof Backpressure) slowed++;
        throw error;
      }
    },
    checkpoint,
    parallel: Number(values.parallel),
    pace: pacer(Number(values.rate)),
  }).catch((error: unknown) => {
    console.error(String(error));
    return null;
  });
  // A run cut off by --seconds reports what its checkpoint says was imported.
  const report = finished ?? (await checkpoint.load());
  const importSeconds = (Date.now() - started) / 1_000;
  // A saturated server may not answer /metrics for a while: the rate stands without the costs.
  const after = await settledMetrics(http, service, 120_000).catch((error: unknown) => {
    console.error(`no costs: ${String(error)}`);
    return null;
  });
  const settledSeconds = (Date.now() - started) / 1_000;
  // The costs take in the sweeps too (the marks' and acknowledgements' commits), which may come after the stores settled.
  const importEndedAt = started + importSeconds * 1_000;
  await untilSwept(importEndedAt);
  const costsAfter = after && (await settledMetrics(http, service, 120_000).catch(() => after));
  if (report) {
    if (!finished) console.log(`cut off after ${values.seconds} s at line ${report.line} of ${edges}`);
    console.log(
      `imported ${report.read} lines (${report.applied} applied) in ${importSeconds.toFixed(1)} s: ${(report.read / importSeconds).toFixed(1)} edges/s (--parallel ${values.parallel}, slowed by the server ${slowed} times)`,
    );
    console.log(`stores settled (metrics quiet) ${settledSeconds.toFixed(1)} s after the start: ${(report.applied / settledSeconds).toFixed(0)} edges/s end to end`);
    if (costsAfter) console.log(costsTable(costsBetween(before, costsAfter, report.applied), null).replaceAll("per like", "per imported edge"));
    // A cut-off run is a figure too (the doc says so in its row); a run with refusals is not.
    if (values.figure && report.refusals.length === 0) {
      const run = { script: "bench:import", argv: process.argv.slice(2), commit: currentCommit(), startedAt: new Date(started).toISOString(), machine: machineNow() };
      const columns = [
        { name: "edges in the file", align: "right" },
        { name: "imported", align: "right" },
        { name: "applied", align: "right" },
        { name: "import seconds", align: "right", decimals: 1 },
        { name: "import rate, edges/s", align: "right", decimals: 1 },
        { name: "settled, seconds after the start", align: "right", decimals: 1 },
        { name: "end to end, edges/s", align: "right", decimals: 1 },
        { name: "cut off by --seconds", align: "left" },
      ] as const;
      const row = [edges, report.read, report.applied, importSeconds, report.read / importSeconds, settledSeconds, report.applied / settledSeconds, finished ? "no" : "yes"];
      saveFigure(tableFigure(values.figure, run, [...columns], [row]));
    }
  }
} finally {
  await server.stop();
  removeStateDir(server.stateDir);
}
