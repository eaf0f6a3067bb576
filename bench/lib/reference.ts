// `--reference`: the same scenario against the reference Workers of
// bench/reference/, started beside plaudit with `wrangler dev` for the whole
// run and loaded with the same users, items and connections. On a shared
// machine a ratio to the runtime's own limits, measured in the same run, is
// the figure that means something; a single phase still swings with what the
// machine did in those seconds, so the sides take turns over several rounds
// and the median of each round's ratio is the figure to quote.
import { HttpClient } from "./http";
import { LikeModel } from "./model";
import { timedPhase } from "./phase";
import type { Summary } from "./recorder";
import { startReference, type LocalServer } from "./server";
import type { RunContext } from "../scenarios/operations";
import type { Scenario } from "../scenarios/index";

/** One side of the comparison: plaudit, or a reference Worker. */
export type Contender = {
  name: string;
  /** One timed phase of the scenario against this side. */
  phase(): Promise<Summary>;
  /** Waits until the work this side's phase left running is done, so the next phase does not pay for it. */
  settle?(): Promise<void>;
};

/** One timed phase's figures. */
export type PhaseRun = { round: number; name: string; opsPerSecond: number; p99: number; errors: number };

/** plaudit's ops/s divided by a reference's, and its p99 divided by the reference's. */
export type Ratio = { name: string; throughput: number; p99: number };

export type ReferenceComparison = {
  rounds: number;
  /** Every timed phase, plaudit's (name "plaudit") and the references', in the order they ran. */
  runs: PhaseRun[];
  /** Each round's ratios, per reference. */
  ratios: (Ratio & { round: number })[];
  /** The median of each reference's ratios over the rounds: the figures to quote. */
  medians: Ratio[];
};

export const PLAUDIT = "plaudit";

const round2 = (n: number) => Math.round(n * 100) / 100;
const ratio = (a: number, b: number) => (b === 0 ? 0 : a / b);
const workerLabel = (name: string) => (name === PLAUDIT ? PLAUDIT : `reference ${name}`);

/** The middle value; with an even count, the mean of the middle two. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The order of a round's phases: as given in odd rounds, reversed in even
 * ones, so no side always goes first (or last) and a slow or fast stretch of
 * the machine does not always fall on the same side.
 */
export function roundOrder<T>(round: number, sides: readonly T[]): T[] {
  return round % 2 === 1 ? [...sides] : [...sides].reverse();
}

export type StartedReference = { name: string; server: LocalServer };

/**
 * Starts the reference Workers one after the other, each added to `started`
 * as soon as it answers, so a later failure or a signal still stops it.
 */
export async function startReferences(names: readonly string[], secret: string, started: StartedReference[]): Promise<void> {
  for (const name of names) {
    console.error(`reference ${name}: starting (bench/reference/${name}.ts)...`);
    started.push({ name, server: await startReference(name, secret) });
  }
}

/** The reference Workers as contenders: each keeps its own model (its answers are not checked) across the rounds. */
export function referenceContenders(
  servers: readonly StartedReference[],
  context: (http: HttpClient) => RunContext,
  users: readonly string[],
  scenario: Scenario,
  phase: { seconds: number; connections: number },
): { contenders: Contender[]; close(): void } {
  const clients = servers.map(({ server }) => new HttpClient(server.url, phase.connections));
  const contenders = servers.map(({ name }, i): Contender => {
    const ctx = { ...context(clients[i]!), model: new LikeModel(), readsExact: false };
    return {
      name,
      async phase() {
        const { recorder, seconds } = await timedPhase(ctx, users, scenario, phase);
        return recorder.summary(seconds);
      },
    };
  });
  return { contenders, close: () => clients.forEach((client) => client.close()) };
}

/** `rounds` rounds of one timed phase per side, plaudit first in odd rounds and last in even ones. */
export async function runRounds(plaudit: Contender, references: readonly Contender[], rounds: number): Promise<ReferenceComparison> {
  const runs: PhaseRun[] = [];
  const phases = rounds * (references.length + 1);
  for (let round = 1; round <= rounds; round++) {
    for (const side of roundOrder(round, [plaudit, ...references])) {
      console.error(`round ${round}/${rounds}: ${workerLabel(side.name)}...`);
      const { total } = await side.phase();
      runs.push({ round, name: side.name, opsPerSecond: total.opsPerSecond, p99: total.p99, errors: total.errors });
      if (runs.length < phases) await side.settle?.();
    }
  }
  return compare(runs, rounds);
}

/** Each round's ratios of plaudit to every reference, and their medians over the rounds. */
export function compare(runs: readonly PhaseRun[], rounds: number): ReferenceComparison {
  const names = [...new Set(runs.filter((r) => r.name !== PLAUDIT).map((r) => r.name))];
  const raw = names.flatMap((name) =>
    runs
      .filter((r) => r.name === name)
      .flatMap((ref) => {
        const own = runs.find((r) => r.name === PLAUDIT && r.round === ref.round);
        return own ? [{ name, round: ref.round, throughput: ratio(own.opsPerSecond, ref.opsPerSecond), p99: ratio(own.p99, ref.p99) }] : [];
      }),
  );
  const medians = names.map((name) => {
    const mine = raw.filter((r) => r.name === name);
    return { name, throughput: round2(median(mine.map((r) => r.throughput))), p99: round2(median(mine.map((r) => r.p99))) };
  });
  return { rounds, runs: [...runs], ratios: raw.map((r) => ({ ...r, throughput: round2(r.throughput), p99: round2(r.p99) })), medians };
}

/**
 * The comparison as rows: a header, one row per round and worker in the
 * order they ran (a reference's row with that round's ratios), then one
 * median row per worker. Shared by the terminal table and the HTML report.
 */
export function referenceRows(comparison: ReferenceComparison): string[][] {
  const header = ["round", "worker", "ops/s", "p99 ms", "plaudit/ref ops/s", "plaudit/ref p99"];
  const perRound = comparison.runs.map((run) => {
    const r = comparison.ratios.find((x) => x.name === run.name && x.round === run.round);
    return [
      String(run.round),
      `${workerLabel(run.name)}${run.errors > 0 ? ` (${run.errors} errors)` : ""}`,
      String(run.opsPerSecond),
      String(run.p99),
      r ? `${r.throughput}x` : "",
      r ? `${r.p99}x` : "",
    ];
  });
  const workers = [...new Set(comparison.runs.map((run) => run.name))];
  const medianRows = workers.map((name) => {
    const mine = comparison.runs.filter((run) => run.name === name);
    const m = comparison.medians.find((x) => x.name === name);
    return [
      "MEDIAN",
      workerLabel(name),
      String(round2(median(mine.map((run) => run.opsPerSecond)))),
      String(round2(median(mine.map((run) => run.p99)))),
      m ? `${m.throughput}x` : "",
      m ? `${m.p99}x` : "",
    ];
  });
  return [header, ...perRound, ...medianRows];
}

/** The line to quote: each reference's median ratios. */
export function medianLine(comparison: ReferenceComparison): string {
  const medians = comparison.medians.map((m) => `plaudit / ${m.name}: ops/s ${m.throughput}x, p99 ${m.p99}x`).join("; ");
  return `MEDIAN ratios over ${comparison.rounds} rounds (the figures to quote): ${medians}`;
}

export function referenceTable(comparison: ReferenceComparison): string {
  const rows = referenceRows(comparison);
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const line = (r: string[]) => r.map((cell, c) => (c < 2 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join("  ");
  return [
    `reference Workers, ${comparison.rounds} interleaved rounds (MEDIAN rows: each column's own median over the rounds):`,
    ...rows.map(line),
    medianLine(comparison),
  ].join("\n");
}
