import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { evaluate, limitsCrossed, type Measured, type Prices, type Workload } from "../../capacity/model";
import { measuredFromReports } from "../../capacity/measured";
import { renderCapacity } from "../../capacity/render";

const root = resolve(import.meta.dirname, "../..");
const read = <T>(path: string): T => JSON.parse(readFileSync(resolve(root, path), "utf8")) as T;
const prices = read<Prices>("capacity/prices.json");
const workload = read<Workload>("capacity/workload.json");
const measured = read<Measured>("capacity/measured.json");

describe("the capacity model", () => {
  it("takes its measured costs from the committed bench reports, not from a hand-typed file", () => {
    expect(measuredFromReports(read("capacity/bench-write.json"), read("capacity/bench-feed.json"), measured.source)).toEqual(measured);
  });

  it("is what docs/capacity.md says: the committed page matches the committed inputs (run npm run capacity)", () => {
    expect(readFileSync(resolve(root, "docs/capacity.md"), "utf8")).toBe(renderCapacity(workload, measured, prices));
  });

  it("costs twice as much in usage-billed lines at twice the load", () => {
    const base = workload.shapes[0]!;
    const one = evaluate(base, workload, measured, prices);
    const two = evaluate({ ...base, likesPerSecond: base.likesPerSecond * 2, unlikesPerSecond: base.unlikesPerSecond * 2, countReadsPerSecond: base.countReadsPerSecond * 2 }, workload, measured, prices);
    const line = (r: typeof one, name: string) => r.costs.find((c) => c.component === name)!.monthlyUsd;
    for (const name of ["Workers requests", "Durable Objects requests", "Durable Objects rows written", "Queues", "D1 rows written"]) {
      expect(line(two, name)).toBeCloseTo(2 * line(one, name), 6);
    }
    expect(line(two, "Durable Objects storage")).toBe(line(one, "Durable Objects storage"));
  });

  it("prices rows written at the list price: one more row per like adds the like rate times a month at $1 per million", () => {
    const base = workload.shapes[0]!;
    const more = { ...measured, perWrite: { ...measured.perWrite, rowsWritten: measured.perWrite.rowsWritten + 1 } };
    const delta =
      evaluate(base, workload, more, prices).costs.find((c) => c.component === "Durable Objects rows written")!.monthlyUsd -
      evaluate(base, workload, measured, prices).costs.find((c) => c.component === "Durable Objects rows written")!.monthlyUsd;
    expect(delta).toBeCloseTo(((base.likesPerSecond + base.unlikesPerSecond) * 30 * 24 * 3600) / 1e6, 3);
  });

  it("sizes queues to stay under 80 % of 5,000 messages a second each", () => {
    const peak = evaluate(workload.shapes[1]!, workload, measured, prices);
    expect(peak.rates.queueMessages / peak.needs.queues).toBeLessThanOrEqual(4000);
    expect(peak.rates.queueMessages / Math.max(1, peak.needs.queues - 1)).toBeGreaterThan(4000);
  });

  it("names as first limit the one the load goes furthest past", () => {
    const peak = evaluate(workload.shapes[1]!, workload, measured, prices);
    const limits = limitsCrossed(peak, workload, prices);
    expect(limits.map((l) => l.ratio)).toEqual([...limits.map((l) => l.ratio)].sort((a, b) => b - a));
    expect(limits[0]!.ratio).toBeGreaterThan(1);
  });
});
