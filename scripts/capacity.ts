// `npm run capacity [-- --report <write bench json> [--feed-report <feed bench json>] --spread-feed-report <feed bench json at K >= 3>]`:
// with reports, first takes the counted per-operation costs (and the feed
// runs the read model is checked against) from them into
// capacity/measured.json; then computes docs/capacity.md from
// capacity/measured.json, workload.json, prices.json, latency.json and passes.json.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { measuredFromReports } from "../capacity/measured";
import type { LatencyInputs } from "../capacity/latency";
import type { Measured, Prices, Workload } from "../capacity/model";
import type { PassInputs } from "../capacity/passes";
import { renderCapacity } from "../capacity/render";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const read = <T>(path: string): T => JSON.parse(readFileSync(path, "utf8")) as T;

const { values } = parseArgs({
  options: {
    report: { type: "string" },
    "feed-report": { type: "string" },
    "spread-feed-report": { type: "string" },
    out: { type: "string", default: join(root, "docs", "capacity.md") },
  },
});

const measuredPath = join(root, "capacity", "measured.json");
if (values.report) {
  const write = read<unknown>(resolve(values.report));
  const feed = values["feed-report"] ? read<unknown>(resolve(values["feed-report"])) : write;
  if (!values["spread-feed-report"]) throw new Error("--spread-feed-report: a feed bench report at K >= 3 (npm run bench -- --scenario feed --var COUNT_DATABASES=4) is needed beside --report");
  const spread = read<unknown>(resolve(values["spread-feed-report"]));
  const sources = [values.report, values["feed-report"], values["spread-feed-report"]].filter(Boolean).map((p) => relative(root, resolve(p!)));
  const measured = measuredFromReports(write, feed, spread, sources.join(", "));
  writeFileSync(measuredPath, JSON.stringify(measured, null, 2) + "\n");
  console.log(`capacity/measured.json: costs from ${measured.source}`);
}

const input = <T>(name: string) => read<T>(join(root, "capacity", name));
const doc = renderCapacity(
  input<Workload>("workload.json"),
  read<Measured>(measuredPath),
  input<Prices>("prices.json"),
  input<LatencyInputs>("latency.json"),
  input<PassInputs>("passes.json"),
);
writeFileSync(values.out!, doc);
console.log(`${relative(root, values.out!)}: written`);
