// Latencies and outcomes of every request of a run, per operation and per
// second, and the exactness violations found along the way.

export type Outcome = "ok" | "error" | "rejected";

type Second = { ops: Map<string, number>; errors: number; latencies: number[] };

export type Percentiles = { p50: number; p90: number; p99: number; p999: number; max: number };

export const PERCENTILES = [50, 75, 90, 95, 99, 99.9, 100] as const;

/**
 * The index of the `p`th percentile (nearest rank) in a sorted list of `n`.
 * The product is rounded off to a millionth before its ceiling: 99.9 / 100
 * times 2000 is 1998.0000000000002 in floating point, which would take the
 * 1,999th.
 */
const rankOf = (n: number, p: number) => Math.min(n - 1, Math.max(0, Math.ceil(Math.round((p / 100) * n * 1e6) / 1e6) - 1));

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[rankOf(sorted.length, p)]!;
}

/** A span of time in ms on the monotonic clock: the clock `perf` stamps its samples with under `-k monotonic`. */
export type Window = { from: number; to: number };

/** Now, in ms on the monotonic clock. */
export const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6;

export class Recorder {
  readonly startedAt = performance.now();
  readonly #errors = new Map<string, number>();
  readonly #rejected = new Map<string, number>();
  readonly #seconds: Second[] = [];
  /** Each answered request: its operation, its latency, and when it was recorded, right as its answer came (`slowest` finds its spans in that). */
  readonly #answers: { op: string; ms: number; at: number }[] = [];
  readonly violations: string[] = [];
  violationCount = 0;
  /** Examples of errors, to say what went wrong without flooding the report. */
  readonly errorSamples: string[] = [];

  record(op: string, ms: number, outcome: Outcome, detail?: string): void {
    const second = this.#second(Math.floor((performance.now() - this.startedAt) / 1000));
    if (outcome === "ok") {
      this.#answers.push({ op, ms, at: monotonicMs() });
      second.ops.set(op, (second.ops.get(op) ?? 0) + 1);
      second.latencies.push(ms);
    } else if (outcome === "error") {
      this.#errors.set(op, (this.#errors.get(op) ?? 0) + 1);
      second.errors++;
      if (detail && this.errorSamples.length < 20) this.errorSamples.push(`${op}: ${detail}`);
    } else {
      this.#rejected.set(op, (this.#rejected.get(op) ?? 0) + 1);
    }
  }

  violation(message: string): void {
    this.violationCount++;
    if (this.violations.length < 50) this.violations.push(message);
  }

  #second(index: number): Second {
    while (this.#seconds.length <= index) this.#seconds.push({ ops: new Map(), errors: 0, latencies: [] });
    return this.#seconds[index]!;
  }

  /** The last completed second, for the live progress line. */
  lastSecond(): { ops: number; p99: number } {
    const index = Math.floor((performance.now() - this.startedAt) / 1000) - 1;
    const second = this.#seconds[index];
    if (!second) return { ops: 0, p99: 0 };
    const sorted = [...second.latencies].sort((a, b) => a - b);
    return { ops: sorted.length, p99: percentile(sorted, 99) };
  }

  /**
   * Appends another phase's requests, its seconds after this one's, so
   * several timed phases (the rounds of `--reference`) report as one.
   */
  absorb(other: Recorder): void {
    for (const [op, n] of other.#errors) this.#errors.set(op, (this.#errors.get(op) ?? 0) + n);
    for (const [op, n] of other.#rejected) this.#rejected.set(op, (this.#rejected.get(op) ?? 0) + n);
    this.#seconds.push(...other.#seconds);
    // One at a time: a long run's answers are too many to pass as arguments.
    for (const answer of other.#answers) this.#answers.push(answer);
    this.absorbViolations(other);
    this.errorSamples.push(...other.errorSamples.slice(0, 20 - this.errorSamples.length));
  }

  /** Takes in another recorder's wrong answers alone: for requests off the clock (warm-ups, the lag phase) that are still checked. */
  absorbViolations(other: Recorder): void {
    for (const why of other.violations) this.violation(why);
    // Violations past the other's first 50 were counted, not kept.
    this.violationCount += other.violationCount - other.violations.length;
  }

  /**
   * The spans of the answers at or past the `p`th percentile of latency,
   * every operation together (the p99's own answer included, so at least one
   * when any was answered), from each request to its answer.
   */
  slowest(p: number): Window[] {
    const sorted = [...this.#answers].sort((a, b) => a.ms - b.ms);
    if (sorted.length === 0) return [];
    return sorted.slice(rankOf(sorted.length, p)).map(({ ms, at }) => ({ from: at - ms, to: at }));
  }

  /** Every answered request's latency in ms, every operation together, in the order they were answered. */
  latencies(): number[] {
    return this.#answers.map(({ ms }) => ms);
  }

  errorCount(): number {
    return [...this.#errors.values()].reduce((a, b) => a + b, 0);
  }

  summary(seconds: number) {
    const latencies = new Map<string, number[]>();
    for (const { op, ms } of this.#answers) {
      const list = latencies.get(op);
      if (list) list.push(ms);
      else latencies.set(op, [ms]);
    }
    const ops = [...new Set([...latencies.keys(), ...this.#errors.keys(), ...this.#rejected.keys()])].sort();
    const perOp = Object.fromEntries(
      ops.map((op) => {
        const sorted = (latencies.get(op) ?? []).sort((a, b) => a - b);
        const curve = Object.fromEntries(PERCENTILES.map((p) => [String(p), round(percentile(sorted, p))]));
        return [
          op,
          {
            count: sorted.length,
            opsPerSecond: round(sorted.length / seconds),
            errors: this.#errors.get(op) ?? 0,
            rejected: this.#rejected.get(op) ?? 0,
            p50: round(percentile(sorted, 50)),
            p90: round(percentile(sorted, 90)),
            p99: round(percentile(sorted, 99)),
            p999: round(percentile(sorted, 99.9)),
            max: round(percentile(sorted, 100)),
            curve,
          },
        ];
      }),
    );
    const all = this.#answers.map(({ ms }) => ms).sort((a, b) => a - b);
    const timeline = this.#seconds.map((s, t) => {
      const sorted = [...s.latencies].sort((a, b) => a - b);
      return { t, ops: Object.fromEntries(s.ops), errors: s.errors, p50: round(percentile(sorted, 50)), p99: round(percentile(sorted, 99)) };
    });
    return {
      total: {
        count: all.length,
        opsPerSecond: round(all.length / seconds),
        errors: this.errorCount(),
        rejected: [...this.#rejected.values()].reduce((a, b) => a + b, 0),
        p50: round(percentile(all, 50)),
        p99: round(percentile(all, 99)),
      },
      perOp,
      timeline,
    };
  }
}

export type Summary = ReturnType<Recorder["summary"]>;

const round = (n: number) => Math.round(n * 100) / 100;
