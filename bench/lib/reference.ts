// `--reference`: the same scenario against the reference Workers of
// bench/reference/, started beside plaudit with `wrangler dev` for the whole
// run and loaded with the same users, items and connections. On a shared
// machine a ratio to the runtime's own limits, measured in the same run, is
// the figure that means something; a single phase still swings with what the
// machine did in those seconds, so the sides take turns over several rounds
// and the median of each round's ratio is the figure to quote.
import { workerdCpuMs } from "./cpu";
import { HttpClient } from "./http";
import { LikeModel } from "./model";
import { timedPhase } from "./phase";
import { percentile, Recorder, type Summary, type Window } from "./recorder";
import { startReference, type LocalServer } from "./server";
import type { RunContext } from "../scenarios/operations";
import type { Scenario } from "../scenarios/index";
import { alignedRows } from "./text-table";
import { addFlushes, emptyFlushTally, FLUSH_ROWS, type FlushTally } from "./flushes";
import { NATIVE_ROWS, nativeMsPerRequest, NativeSampler, PROXY, SAMPLE_MS } from "./native";
import { addCounts, sampleCount, type NativeCounts } from "./part-counts";

/** One side of the comparison: plaudit, or a reference Worker. */
export type Contender = {
  name: string;
  /** Work before a phase that is neither timed nor in its CPU figure (--feed-first). */
  prepare?(): Promise<void>;
  /**
   * With --warm-up: the same load off the clock, right before the timed
   * phase, so the phase meets the server in a steady state and its CPU
   * figure spans the phase alone.
   */
  warmUp?(): Promise<void>;
  /** One timed phase of the scenario against this side. */
  phase(): Promise<PhaseSummary>;
  /**
   * After its phase: the reads that account for it, then a wait until the
   * work the phase left running is done, so the next phase does not pay for it.
   */
  settle?(): Promise<void>;
  /** CPU ms its server has used so far (lib/cpu.ts), or null when it cannot be read. */
  cpuMs?(): number | null;
  /** With --native: starts sampling its server's processes (lib/native.ts) over the span of its CPU figure. */
  native?(): Promise<Pick<NativeSampler, "stop">>;
};

/**
 * A timed phase's summary; the spans of its answers at or past its p99,
 * found only when `--native` looks behind them; and its recorder, whose
 * answers are pooled with the side's other phases.
 */
export type PhaseSummary = Summary & { slowest?: () => Window[]; recorder?: Recorder };

/** The answers at or past this percentile are those `--native` looks behind. */
const SLOWEST_FROM = 99;

/** What a side's timed phase answers, from the phase's own recorder. */
export function phaseSummary(recorder: Recorder, seconds: number): PhaseSummary {
  return { ...recorder.summary(seconds), slowest: () => recorder.slowest(SLOWEST_FROM), recorder };
}

/**
 * One Worker's answers of every round taken together: a percentile over
 * all of them. A round's p99 is the fifth slowest of its answers (of 400 at
 * 40 likes a second for 10 s), so it swings from round to round; over
 * twenty rounds' answers it is the edge of the slowest eighty.
 */
export type PooledLatency = { name: string; answers: number; p50: number; p99: number; p999: number };

/** Each side's answers over all its phases (its phases' recorders absorbed into one), as percentiles. */
function pooledLatencies(bySide: ReadonlyMap<string, Recorder>): PooledLatency[] {
  return [...bySide].map(([name, recorder]) => {
    const sorted = recorder.latencies().sort((a, b) => a - b);
    const at = (p: number) => round2(percentile(sorted, p));
    return { name, answers: sorted.length, p50: at(50), p99: at(99), p999: at(99.9) };
  });
}

/** With --native: what a Worker's event loop did while its slowest answers were on their way, over all its phases. */
export type Behind = { counts: NativeCounts; answers: number; waitedMs: number };

/** With --native: a Worker's disk flushes over all its phases, and the requests those phases answered. */
export type SideFlushes = FlushTally & { requests: number };

/**
 * One timed phase's figures. `cpuMsPerRequest`: the server's CPU per
 * answered request, from the phase's start to the end of its settling (the
 * pipeline's tail included) or, after a warm-up, to the phase's end (the
 * warm-up's tail ran into it in the tail's stead).
 */
export type PhaseRun = { round: number; name: string; opsPerSecond: number; p50: number; p99: number; errors: number; cpuMsPerRequest?: number | null };

/** plaudit's figure divided by a reference's: ops/s, p50, p99, and CPU per request (null when either was not measured). */
export type Ratio = { name: string; throughput: number; p50: number; p99: number; cpu: number | null };

export type ReferenceComparison = {
  rounds: number;
  /** Every timed phase, plaudit's (name "plaudit") and the references', in the order they ran. */
  runs: PhaseRun[];
  /** Each round's ratios, per reference. */
  ratios: (Ratio & { round: number })[];
  /** The median of each reference's ratios over the rounds: the figures to quote. */
  medians: Ratio[];
  /** With --native: each Worker's native samples by part, over all its phases. */
  native?: Map<string, NativeCounts>;
  /** With --native: each Worker's event-loop samples behind its slowest answers. */
  behind?: Map<string, Behind>;
  /** With --native: each Worker's disk flushes. */
  flushes?: Map<string, SideFlushes>;
  /** Each Worker's answers over all its phases, when its phases kept their latencies. */
  pooled?: PooledLatency[];
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
  phase: { seconds: number; connections: number; rate: number | null; native: boolean; warmUp: number },
): { contenders: Contender[]; close(): void } {
  const clients = servers.map(({ server }) => new HttpClient(server.url, phase.connections));
  const contenders = servers.map(({ name }, i): Contender => {
    const ctx = { ...context(clients[i]!), model: new LikeModel(), readsExact: false };
    // Not checked, but an error answer is worth seeing: the table only counts it.
    const load = async (seconds: number, label: string) => {
      const run = await timedPhase(ctx, users, scenario, { ...phase, seconds });
      for (const sample of run.recorder.errorSamples.slice(0, 3)) console.error(`${label}: ${sample}`);
      return run;
    };
    return {
      name,
      cpuMs: () => workerdCpuMs(servers[i]!.server.pid),
      ...(phase.native ? { native: () => NativeSampler.start(servers[i]!.server.pid, servers[i]!.server.port) } : {}),
      ...(phase.warmUp > 0
        ? {
            async warmUp() {
              console.error(`reference ${name}: ${phase.warmUp} s of warm-up...`);
              await load(phase.warmUp, `reference ${name}, warm-up`);
            },
          }
        : {}),
      async phase() {
        const { recorder, seconds } = await load(phase.seconds, `reference ${name}`);
        return phaseSummary(recorder, seconds);
      },
      settle: () => referenceSettled(clients[i]!, name),
    };
  });
  return { contenders, close: () => clients.forEach((client) => client.close()) };
}

/** How long a reference's own work after a phase may take (the contract's alarms run 10 s after a change). */
const REFERENCE_SETTLE_MS = 30_000;

/**
 * Waits until a reference has no work of its own left (its `/healthz` says
 * `busy: 0`, or says nothing of it), so that work is in its phase's CPU
 * figure and not in the next phase's, as plaudit's tail is in plaudit's. It
 * sleeps until the work is due (`busy_until`, on the same clock here) before
 * it asks again: every poll is a request in the reference's CPU figure.
 */
async function referenceSettled(http: HttpClient, name: string): Promise<void> {
  const deadline = Date.now() + REFERENCE_SETTLE_MS;
  for (;;) {
    const { status, body } = await http.request("GET", "/healthz");
    const { busy, busy_until: until } = (body ?? {}) as { busy?: unknown; busy_until?: unknown };
    // An answer that says nothing of its work: the reference has none.
    if (status === 200 && (typeof busy !== "number" || busy === 0)) return;
    const now = Date.now();
    if (now >= deadline) {
      console.error(`reference ${name} still busy (${status === 200 ? busy : `/healthz answered ${status}`}) ${REFERENCE_SETTLE_MS / 1000} s after its phase: the next phase shares the machine with it`);
      return;
    }
    const due = typeof until === "number" ? until - now : 0;
    await new Promise((resolve) => setTimeout(resolve, Math.min(Math.max(due, 0) + 250, deadline - now)));
  }
}

/** A side's entry in a per-side map, made by `fresh` on first use. */
function sideEntry<T>(bySide: Map<string, T>, name: string, fresh: () => T): T {
  const entry = bySide.get(name) ?? fresh();
  bySide.set(name, entry);
  return entry;
}

/** `rounds` rounds of one timed phase per side, plaudit first in odd rounds and last in even ones. */
export async function runRounds(plaudit: Contender, references: readonly Contender[], rounds: number): Promise<ReferenceComparison> {
  const runs: PhaseRun[] = [];
  const native = new Map<string, NativeCounts>();
  const behind = new Map<string, Behind>();
  const flushes = new Map<string, SideFlushes>();
  const pools = new Map<string, Recorder>();
  for (let round = 1; round <= rounds; round++) {
    for (const side of roundOrder(round, [plaudit, ...references])) {
      console.error(`round ${round}/${rounds}: ${workerLabel(side.name)}...`);
      await side.prepare?.();
      await side.warmUp?.();
      let sampler = await side.native?.();
      const cpuBefore = side.cpuMs?.() ?? null;
      let total: Summary["total"];
      let slowest: PhaseSummary["slowest"];
      let cpuAfter: number | null;
      const endSpan = async () => {
        const cpu = side.cpuMs?.() ?? null;
        const stopping = sampler;
        sampler = undefined;
        if (stopping) {
          const spans = slowest?.() ?? [];
          const phase = await stopping.stop(spans);
          addCounts(sideEntry(native, side.name, () => new Map()), phase.counts);
          const mine = sideEntry(behind, side.name, () => ({ counts: new Map(), answers: 0, waitedMs: 0 }));
          addCounts(mine.counts, phase.behind);
          mine.answers += spans.length;
          mine.waitedMs += spans.reduce((sum, { from, to }) => sum + (to - from), 0);
          const flushed = sideEntry(flushes, side.name, () => ({ ...emptyFlushTally(), requests: 0 }));
          addFlushes(flushed, phase.flushes);
          flushed.requests += total.count;
        }
        return cpu;
      };
      try {
        let recorder: Recorder | undefined;
        ({ total, slowest, recorder } = await side.phase());
        if (recorder) sideEntry(pools, side.name, () => new Recorder()).absorb(recorder);
        // After a warm-up the phase's own tail is left out, as the warm-up's ran into it; without
        // one, each phase's CPU is measured to the end of its tail, the last phase's too.
        if (side.warmUp) {
          cpuAfter = await endSpan();
          await side.settle?.();
        } else {
          await side.settle?.();
          cpuAfter = await endSpan();
        }
      } catch (error) {
        await sampler?.stop().catch(() => undefined);
        throw error;
      }
      const cpuMsPerRequest = cpuBefore === null || cpuAfter === null || total.count === 0 ? null : round2((cpuAfter - cpuBefore) / total.count);
      runs.push({ round, name: side.name, opsPerSecond: total.opsPerSecond, p50: total.p50, p99: total.p99, errors: total.errors, cpuMsPerRequest });
    }
  }
  return {
    ...compare(runs, rounds),
    ...(native.size > 0 ? { native, behind, flushes } : {}),
    ...(pools.size > 0 ? { pooled: pooledLatencies(pools) } : {}),
  };
}

/** One side's figures over another's in each round both ran (CPU null where either lacks it). */
function roundRatios(sides: readonly PhaseRun[], bases: readonly PhaseRun[]): (Omit<Ratio, "name"> & { round: number })[] {
  return bases.flatMap((base) => {
    const side = sides.find((r) => r.round === base.round);
    if (!side) return [];
    const cpu = side.cpuMsPerRequest && base.cpuMsPerRequest ? ratio(side.cpuMsPerRequest, base.cpuMsPerRequest) : null;
    return [{ round: base.round, throughput: ratio(side.opsPerSecond, base.opsPerSecond), p50: ratio(side.p50, base.p50), p99: ratio(side.p99, base.p99), cpu }];
  });
}

/** The median of each round's ratio; no CPU ratio unless every round has one. */
function medianRatio(ratios: readonly Omit<Ratio, "name">[]): Omit<Ratio, "name"> {
  const cpus = ratios.flatMap((r) => (r.cpu === null ? [] : [r.cpu]));
  return {
    throughput: round2(median(ratios.map((r) => r.throughput))),
    p50: round2(median(ratios.map((r) => r.p50))),
    p99: round2(median(ratios.map((r) => r.p99))),
    cpu: cpus.length === ratios.length && cpus.length > 0 ? round2(median(cpus)) : null,
  };
}

/** The median CPU per request over one Worker's phases that measured it; null when none did. */
function medianCpu(runs: readonly PhaseRun[]): number | null {
  const cpus = runs.flatMap((run) => (typeof run.cpuMsPerRequest === "number" ? [run.cpuMsPerRequest] : []));
  return cpus.length > 0 ? round2(median(cpus)) : null;
}

/** Each column's own median over one Worker's phases, as the tables print them (CPU blank when no phase measured it). */
function medianColumns(runs: readonly PhaseRun[]): { opsPerSecond: string; p50: string; p99: string; cpu: string } {
  const cpu = medianCpu(runs);
  return {
    opsPerSecond: String(round2(median(runs.map((run) => run.opsPerSecond)))),
    p50: String(round2(median(runs.map((run) => run.p50)))),
    p99: String(round2(median(runs.map((run) => run.p99)))),
    cpu: cpu === null ? "" : String(cpu),
  };
}

const times = (x: number | null | undefined) => (x === null || x === undefined ? "" : `${x}x`);
const runsOf = (runs: readonly PhaseRun[], name: string) => runs.filter((run) => run.name === name);

/** Each round's ratios of plaudit to every reference, and their medians over the rounds. */
export function compare(runs: readonly PhaseRun[], rounds: number): ReferenceComparison {
  const names = [...new Set(runs.filter((r) => r.name !== PLAUDIT).map((r) => r.name))];
  const own = runsOf(runs, PLAUDIT);
  const raw = names.flatMap((name) => roundRatios(own, runsOf(runs, name)).map((r) => ({ name, ...r })));
  const medians = names.map((name) => ({ name, ...medianRatio(raw.filter((r) => r.name === name)) }));
  const rounded = raw.map((r) => ({ ...r, throughput: round2(r.throughput), p50: round2(r.p50), p99: round2(r.p99), cpu: r.cpu === null ? null : round2(r.cpu) }));
  return { rounds, runs: [...runs], ratios: rounded, medians };
}

/**
 * The comparison as rows: a header, one row per round and worker in the
 * order they ran (a reference's row with that round's ratios), then one
 * median row per worker. Shared by the terminal table and the HTML report.
 */
export function referenceRows(comparison: ReferenceComparison): string[][] {
  const header = ["round", "worker", "ops/s", "p50 ms", "p99 ms", "CPU ms/req", "plaudit/ref ops/s", "plaudit/ref p50", "plaudit/ref p99", "plaudit/ref CPU"];
  const perRound = comparison.runs.map((run) => {
    const r = comparison.ratios.find((x) => x.name === run.name && x.round === run.round);
    return [
      String(run.round),
      `${workerLabel(run.name)}${run.errors > 0 ? ` (${run.errors} errors)` : ""}`,
      String(run.opsPerSecond),
      String(run.p50),
      String(run.p99),
      String(run.cpuMsPerRequest ?? ""),
      times(r?.throughput),
      times(r?.p50),
      times(r?.p99),
      times(r?.cpu),
    ];
  });
  const workers = [...new Set(comparison.runs.map((run) => run.name))];
  const medianRows = workers.map((name) => {
    const m = comparison.medians.find((x) => x.name === name);
    const { opsPerSecond, p50, p99, cpu } = medianColumns(runsOf(comparison.runs, name));
    return ["MEDIAN", workerLabel(name), opsPerSecond, p50, p99, cpu, times(m?.throughput), times(m?.p50), times(m?.p99), times(m?.cpu)];
  });
  return [header, ...perRound, ...medianRows];
}

/** The reference the goals are set against: the one-commit like. */
const YARDSTICK = "like";

/**
 * Every Worker of the comparison set against the one-commit like, in the
 * order the scenario lists them, plaudit last: each column's median over
 * the rounds, and the median of each round's ratio to the like. With the
 * `contract` reference, its row is the floor the contract sets (what any
 * implementation pays before a like's answer), with `converging` the
 * contract plus the work after the answer done as simply as it can be,
 * with `pipeline` that work in the shape of plaudit's pipeline,
 * and plaudit's row is where plaudit stands; empty when the like reference
 * did not run.
 */
export function yardstickRows(comparison: ReferenceComparison): string[][] {
  const bases = runsOf(comparison.runs, YARDSTICK);
  if (bases.length === 0) return [];
  const header = ["worker", "p50 ms", "p99 ms", "CPU ms/req", `over ${YARDSTICK}: p50`, `over ${YARDSTICK}: p99`, `over ${YARDSTICK}: CPU`];
  const names = [...new Set(comparison.runs.map((run) => run.name).filter((name) => name !== PLAUDIT)), PLAUDIT];
  const rows = names.map((name) => {
    const mine = runsOf(comparison.runs, name);
    const { p50, p99, cpu } = medianColumns(mine);
    const over = medianRatio(roundRatios(mine, bases));
    return [workerLabel(name), p50, p99, cpu, times(over.p50), times(over.p99), times(over.cpu)];
  });
  return [header, ...rows];
}

/**
 * Each Worker's answers of every round pooled, references in the order they
 * ran and plaudit last, each percentile also over the like reference's
 * pooled one; empty without the like reference or without latencies.
 */
export function pooledRows(comparison: ReferenceComparison): string[][] {
  const pooled = comparison.pooled ?? [];
  const base = pooled.find((side) => side.name === YARDSTICK);
  if (!base) return [];
  const over = (value: number, of: number) => times(of === 0 ? null : round2(value / of));
  const header = ["worker", "answers", "p50 ms", "p99 ms", "p99.9 ms", `over ${YARDSTICK}: p50`, `over ${YARDSTICK}: p99`, `over ${YARDSTICK}: p99.9`];
  const rows = plauditLast(pooled.map((side) => side.name)).map((name) => {
    const side = pooled.find((p) => p.name === name)!;
    return [workerLabel(name), String(side.answers), String(side.p50), String(side.p99), String(side.p999), over(side.p50, base.p50), over(side.p99, base.p99), over(side.p999, base.p999)];
  });
  return [header, ...rows];
}

/** Table columns: the references in the order they ran, plaudit last. */
function plauditLast(names: Iterable<string>): string[] {
  const all = [...names];
  return all.filter((name) => name !== PLAUDIT).concat(all.includes(PLAUDIT) ? [PLAUDIT] : []);
}

/**
 * With --native: each Worker's CPU per request (the median over its phases,
 * from the operating system's counters) split by the native parts its
 * samples fell in, one column per Worker, plaudit last; empty without it.
 */
export function nativeRows(comparison: ReferenceComparison): string[][] {
  const native = comparison.native;
  if (!native) return [];
  const names = plauditLast(native.keys());
  const split = names.map((name) => {
    const cpu = medianCpu(runsOf(comparison.runs, name));
    return { cpu, parts: nativeMsPerRequest(native.get(name)!, cpu) };
  });
  const cell = (ms: number | undefined) => (ms === undefined ? "" : ms.toFixed(2));
  return [
    ["part (CPU ms per request)", ...names.map(workerLabel)],
    ...NATIVE_ROWS.map((part) => [part, ...split.map(({ parts }) => cell(parts?.get(part)))]),
    ["all", ...split.map(({ cpu }) => (cpu === null ? "" : String(cpu)))],
  ];
}

/** A table cell: `value` shared over `count` (requests, answers), blank over none. */
const perEach = (value: number, count: number) => (count === 0 ? "" : (value / count).toFixed(2));

/**
 * With --native: what each Worker's event loop spent its CPU on while one of
 * its slowest answers (at or past each phase's p99) was on its way, in ms
 * per such answer, beside those answers' own latency: the wait the loop's
 * work does not explain was spent elsewhere (the proxy, the disk, the
 * client). One column per Worker, plaudit last; empty without --native.
 */
export function behindRows(comparison: ReferenceComparison): string[][] {
  const behind = comparison.behind;
  if (!behind) return [];
  const names = plauditLast(behind.keys());
  const per = (name: string, value: number) => perEach(value, behind.get(name)!.answers);
  return [
    [`part (the event loop's CPU ms while one of the answers at or past the p99 was on its way)`, ...names.map(workerLabel)],
    ...NATIVE_ROWS.filter((part) => part !== PROXY).map((part) => [part, ...names.map((name) => per(name, (behind.get(name)!.counts.get(part) ?? 0) * SAMPLE_MS))]),
    ["all", ...names.map((name) => per(name, sampleCount(behind.get(name)!.counts) * SAMPLE_MS))],
    ["those answers' latency (mean ms)", ...names.map((name) => per(name, behind.get(name)!.waitedMs))],
    ["answers looked behind", ...names.map((name) => String(behind.get(name)!.answers))],
  ];
}

/**
 * With --native: each Worker's disk flushes per request, by what asked for
 * them (lib/flushes.ts), and how long its event loop sat blocked in them:
 * per request, and per slowest answer (at or past each phase's p99) beside
 * those answers' latency. One column per Worker, plaudit last; empty
 * without it.
 */
export function flushRows(comparison: ReferenceComparison): string[][] {
  const flushes = comparison.flushes;
  if (!flushes) return [];
  const names = plauditLast(flushes.keys());
  const perRequest = (name: string, value: number) => perEach(value, flushes.get(name)!.requests);
  const perSlowest = (name: string, value: number) => perEach(value, comparison.behind?.get(name)?.answers ?? 0);
  const all = (name: string) => sampleCount(flushes.get(name)!.counts);
  return [
    ["flushes to disk (fsync, fdatasync), per request", ...names.map(workerLabel)],
    ...FLUSH_ROWS.map((cause) => [cause, ...names.map((name) => perRequest(name, flushes.get(name)!.counts.get(cause) ?? 0))]),
    ["all", ...names.map((name) => perRequest(name, all(name)))],
    ["the event loop blocked in them, ms per request", ...names.map((name) => perRequest(name, flushes.get(name)!.blockedMs))],
    ["the event loop blocked in them while one of the answers at or past the p99 was on its way, ms per such answer", ...names.map((name) => perSlowest(name, flushes.get(name)!.behindMs))],
    ["those answers' latency (mean ms)", ...names.map((name) => perSlowest(name, comparison.behind?.get(name)?.waitedMs ?? 0))],
  ];
}

/** The line to quote: each reference's median ratios. */
export function medianLine(comparison: ReferenceComparison): string {
  const medians = comparison.medians
    .map((m) => `plaudit / ${m.name}: ops/s ${m.throughput}x, p50 ${m.p50}x, p99 ${m.p99}x${m.cpu === null ? "" : `, CPU per request ${m.cpu}x`}`)
    .join("; ");
  return `MEDIAN ratios over ${comparison.rounds} rounds (the figures to quote): ${medians}`;
}

export function referenceTable(comparison: ReferenceComparison): string {
  const ladder = yardstickRows(comparison);
  const pooled = pooledRows(comparison);
  return [
    `reference Workers, ${comparison.rounds} interleaved rounds (MEDIAN rows: each column's own median over the rounds):`,
    ...alignedRows(referenceRows(comparison), 2),
    medianLine(comparison),
    ...(ladder.length > 0 ? ["", `against the one-commit like (medians over the rounds of each round's ratio):`, ...alignedRows(ladder)] : []),
    ...(pooled.length > 0 ? ["", `every round's answers taken together, per Worker (a percentile over all of them swings less than a round's):`, ...alignedRows(pooled)] : []),
    ...(comparison.native ? ["", "where each Worker's CPU went, from native samples over all its phases (sampling slows every side: quote no latency from this run):", ...alignedRows(nativeRows(comparison))] : []),
    ...(comparison.behind ? ["", "what each Worker's event loop did while its slowest answers were on their way:", ...alignedRows(behindRows(comparison))] : []),
    ...(comparison.flushes ? ["", "each Worker's flushes to disk, and its event loop blocked in them (off the CPU, so in no sample above):", ...alignedRows(flushRows(comparison))] : []),
  ].join("\n");
}

