// `npm run capacity [-- --report <write bench json> [--feed-report <feed bench json>]]`:
// with reports, first takes the counted per-operation costs from them into
// capacity/measured.json; then computes docs/capacity.md from
// capacity/measured.json, capacity/workload.json and capacity/prices.json.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { measuredFromReports } from "../capacity/measured";
import type { Measured, Prices, Workload } from "../capacity/model";
import { renderCapacity } from "../capacity/render";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const read = <T>(path: string): T => JSON.parse(readFileSync(path, "utf8")) as T;

const { values } = parseArgs({
  options: {
    report: { type: "string" },
    "feed-report": { type: "string" },
    out: { type: "string", default: join(root, "docs", "capacity.md") },
  },
});

const measuredPath = join(root, "capacity", "measured.json");
if (values.report) {
  const write = read<unknown>(resolve(values.report));
  const feed = values["feed-report"] ? read<unknown>(resolve(values["feed-report"])) : write;
  const sources = [values.report, values["feed-report"]].filter(Boolean).map((p) => relative(root, resolve(p!)));
  const measured = measuredFromReports(write, feed, sources.join(" and "));
  writeFileSync(measuredPath, JSON.stringify(measured, null, 2) + "\n");
  console.log(`capacity/measured.json: costs from ${measured.source}`);
}

const doc = renderCapacity(read<Workload>(join(root, "capacity", "workload.json")), read<Measured>(measuredPath), read<Prices>(join(root, "capacity", "prices.json")));
writeFileSync(values.out!, doc);
console.log(`${relative(root, values.out!)}: written`);
