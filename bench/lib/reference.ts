// `--reference`: the same scenario against the reference Workers of
// bench/reference/, started beside plaudit with `wrangler dev` and loaded one
// after the other with the same users, items and connections. On a shared
// machine a ratio to the runtime's own limits, measured in the same run, is
// the figure that means something.
import { HttpClient } from "./http";
import { LikeModel } from "./model";
import { timedPhase } from "./phase";
import { removeStateDir, startReference } from "./server";
import type { Summary } from "./recorder";
import type { RunContext } from "../scenarios/operations";
import type { Scenario } from "../scenarios/index";

export type ReferenceRun = { name: string; opsPerSecond: number; p99: number; errors: number };

export type ReferenceComparison = {
  runs: ReferenceRun[];
  /** plaudit's ops/s divided by each reference's, and its p99 divided by theirs. */
  ratios: { name: string; throughput: number; p99: number }[];
};

const ratio = (a: number, b: number) => (b === 0 ? 0 : Math.round((a / b) * 100) / 100);

export async function runReferences(
  scenario: Scenario,
  context: (http: HttpClient) => RunContext,
  users: readonly string[],
  secret: string,
  phase: { seconds: number; connections: number },
  plaudit: Summary,
): Promise<ReferenceComparison> {
  const runs: ReferenceRun[] = [];
  for (const name of scenario.references) {
    console.error(`reference ${name}: starting (bench/reference/${name}.ts)...`);
    const server = await startReference(name, secret);
    const http = new HttpClient(server.url, phase.connections);
    try {
      // A fresh model: the reference keeps no state from plaudit's run, and its answers are not checked.
      const ctx = { ...context(http), model: new LikeModel(), readsExact: false };
      const { recorder, seconds } = await timedPhase(ctx, users, scenario, phase);
      const { total } = recorder.summary(seconds);
      runs.push({ name, opsPerSecond: total.opsPerSecond, p99: total.p99, errors: total.errors });
    } finally {
      http.close();
      await server.stop();
      removeStateDir(server.stateDir);
    }
  }
  return {
    runs,
    ratios: runs.map((run) => ({ name: run.name, throughput: ratio(plaudit.total.opsPerSecond, run.opsPerSecond), p99: ratio(plaudit.total.p99, run.p99) })),
  };
}

export function referenceTable(comparison: ReferenceComparison, plaudit: Summary): string {
  const rows = [
    ["worker", "ops/s", "p99 ms", "plaudit ops/s ratio", "plaudit p99 ratio"],
    ["plaudit", String(plaudit.total.opsPerSecond), String(plaudit.total.p99), "", ""],
    ...comparison.runs.map((run, i) => [
      `reference ${run.name}${run.errors > 0 ? ` (${run.errors} errors)` : ""}`,
      String(run.opsPerSecond),
      String(run.p99),
      `${comparison.ratios[i]!.throughput}x`,
      `${comparison.ratios[i]!.p99}x`,
    ]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join("  ")).join("\n");
}
