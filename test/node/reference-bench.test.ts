import { afterEach, describe, expect, it, vi } from "vitest";
import { options } from "../../bench/options";
import { compare, median, phaseSummary, pooledRows, roundOrder, runRounds, yardstickRows, type Contender, type PhaseRun } from "../../bench/lib/reference";
import { feedBatches } from "../../bench/scenarios/operations";
import { monotonicMs, Recorder, type Window } from "../../bench/lib/recorder";

/** The exit code options() asks for, or null when it returns. */
function exitCodeOf(argv: string[]): number | null {
  vi.spyOn(console, "error").mockImplementation(() => {});
  vi.spyOn(process, "exit").mockImplementation((code) => {
    throw new Error(`exit ${code}`);
  });
  try {
    options(argv);
    return null;
  } catch (error) {
    const match = String(error).match(/exit (\d+)/);
    if (!match) throw error;
    return Number(match[1]);
  }
}

describe("the bench's --rounds option", () => {
  afterEach(() => vi.restoreAllMocks());

  it("defaults to 3 rounds with --reference and 1 without", () => {
    expect(options(["--reference"]).rounds).toBe(3);
    expect(options([]).rounds).toBe(1);
    expect(options(["--reference", "--rounds", "5"]).rounds).toBe(5);
  });

  it("exits 2 on a count outside 1 to 20 or not whole", () => {
    for (const bad of ["0", "21", "2.5", "two", ""]) expect(exitCodeOf(["--reference", "--rounds", bad])).toBe(2);
    expect(exitCodeOf(["--reference", "--rounds", "20"])).toBeNull();
  });

  it("exits 2 without --reference: there is nothing to take turns with", () => {
    expect(exitCodeOf(["--rounds", "2"])).toBe(2);
  });
});

describe("the bench's --references option", () => {
  afterEach(() => vi.restoreAllMocks());

  it("starts every reference of the scenario unless asked for some, then those in the scenario's order", () => {
    expect(options(["--reference"]).references).toEqual(options(["--reference"]).scenario.references);
    expect(options(["--reference", "--references", "front-pipeline,like"]).references).toEqual(["like", "front-pipeline"]);
    expect(options(["--reference", "--scenario", "feed", "--references", "feed"]).references).toEqual(["feed"]);
  });

  it("exits 2 on a name the scenario does not have, an empty list, or without --reference", () => {
    expect(exitCodeOf(["--reference", "--references", "like,nope"])).toBe(2);
    expect(exitCodeOf(["--reference", "--scenario", "feed", "--references", "like"])).toBe(2);
    expect(exitCodeOf(["--reference", "--references", ""])).toBe(2);
    expect(exitCodeOf(["--reference", "--references", "like,,front-pipeline"])).toBe(2);
    expect(exitCodeOf(["--references", "like"])).toBe(2);
    expect(exitCodeOf(["--references", "nope"])).toBe(2);
  });
});

describe("the bench's --feed-first option", () => {
  afterEach(() => vi.restoreAllMocks());

  it("is off unless asked for", () => {
    expect(options([]).feedFirst).toBe(false);
    expect(options(["--feed-first"]).feedFirst).toBe(true);
  });

  it("shows every item exactly once, in feeds of at most 50", () => {
    const items = Array.from({ length: 1_001 }, (_, i) => String(i));
    const batches = feedBatches(items);
    expect(batches).toHaveLength(21);
    expect(Math.max(...batches.map((b) => b.length))).toBe(50);
    expect(batches.flat()).toEqual(items);
    expect(feedBatches([])).toEqual([]);
  });

  it("prepares a side before its CPU reading and its phase, in every round, and leaves the other sides alone", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const calls: string[] = [];
    let cpu = 0;
    const summary = { total: { count: 10, opsPerSecond: 1, p50: 1, p99: 2, errors: 0 } };
    const side = (name: string, prepared: boolean): Contender => ({
      name,
      ...(prepared ? { prepare: async () => void calls.push(`${name} prepare`) } : {}),
      cpuMs: () => {
        calls.push(`${name} cpu`);
        return (cpu += 10);
      },
      phase: async () => {
        calls.push(`${name} phase`);
        return summary as Awaited<ReturnType<Contender["phase"]>>;
      },
    });
    await runRounds(side("plaudit", true), [side("like", false)], 2);
    expect(calls).toEqual([
      "plaudit prepare", "plaudit cpu", "plaudit phase", "plaudit cpu", "like cpu", "like phase", "like cpu",
      "like cpu", "like phase", "like cpu", "plaudit prepare", "plaudit cpu", "plaudit phase", "plaudit cpu",
    ]);
  });
});

describe("the bench's --warm-up option", () => {
  afterEach(() => vi.restoreAllMocks());

  it("is off unless asked for, and takes whole seconds up to ten minutes", () => {
    expect(options([]).warmUp).toBe(0);
    expect(options(["--warm-up", "20"]).warmUp).toBe(20);
    for (const bad of ["-1", "601", "2.5", "soon"]) expect(exitCodeOf([`--warm-up=${bad}`])).toBe(2);
  });

  it("spans the CPU figure over the phase alone after a warm-up, and to the end of the settling without one", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const calls: string[] = [];
    // Each step spends CPU of its own, so the figure says which steps it spans.
    const spent = { warmUp: 1_000, phase: 100, settle: 10 };
    const side = (name: string, warm: boolean): Contender => {
      let cpu = 0;
      return {
        name,
        ...(warm
          ? {
              warmUp: async () => {
                calls.push(`${name} warm-up`);
                cpu += spent.warmUp;
              },
            }
          : {}),
        cpuMs: () => {
          calls.push(`${name} cpu`);
          return cpu;
        },
        phase: async () => {
          calls.push(`${name} phase`);
          cpu += spent.phase;
          return { total: { count: 10, opsPerSecond: 1, p50: 1, p99: 2, errors: 0 } } as Awaited<ReturnType<Contender["phase"]>>;
        },
        settle: async () => {
          calls.push(`${name} settle`);
          cpu += spent.settle;
        },
      };
    };
    const { runs } = await runRounds(side("plaudit", true), [side("like", false)], 1);
    expect(calls).toEqual([
      "plaudit warm-up", "plaudit cpu", "plaudit phase", "plaudit cpu", "plaudit settle",
      "like cpu", "like phase", "like settle", "like cpu",
    ]);
    expect(runs.find((r) => r.name === "plaudit")?.cpuMsPerRequest).toBe(spent.phase / 10);
    expect(runs.find((r) => r.name === "like")?.cpuMsPerRequest).toBe((spent.phase + spent.settle) / 10);
  });
});

describe("the rounds of --reference", () => {
  it("reverses the order in even rounds, so every side is first once in two rounds", () => {
    expect(roundOrder(1, ["plaudit", "noop", "like"])).toEqual(["plaudit", "noop", "like"]);
    expect(roundOrder(2, ["plaudit", "noop", "like"])).toEqual(["like", "noop", "plaudit"]);
    expect(roundOrder(3, ["plaudit", "noop"])).toEqual(["plaudit", "noop"]);
  });

  it("takes the middle value, or the mean of the middle two", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
  });

  it("compares plaudit with each reference in the same round and quotes the median ratio", () => {
    const run = (round: number, name: string, opsPerSecond: number, p99: number): PhaseRun => ({ round, name, opsPerSecond, p50: p99 / 2, p99, errors: 0 });
    // Round 3 is the outlier (plaudit slow, the reference fast): the median ignores it.
    const runs = [
      run(1, "plaudit", 100, 40), run(1, "noop", 200, 10),
      run(2, "noop", 250, 20), run(2, "plaudit", 100, 40),
      run(3, "plaudit", 20, 400), run(3, "noop", 400, 5),
    ];
    const comparison = compare(runs, 3);
    expect(comparison.ratios).toEqual([
      { name: "noop", round: 1, throughput: 0.5, p50: 4, p99: 4, cpu: null },
      { name: "noop", round: 2, throughput: 0.4, p50: 2, p99: 2, cpu: null },
      { name: "noop", round: 3, throughput: 0.05, p50: 80, p99: 80, cpu: null },
    ]);
    expect(comparison.medians).toEqual([{ name: "noop", throughput: 0.4, p50: 4, p99: 4, cpu: null }]);
    // Two rounds: the mean of both.
    expect(compare(runs.slice(0, 4), 2).medians).toEqual([{ name: "noop", throughput: 0.45, p50: 3, p99: 3, cpu: null }]);
  });

  it("compares CPU per request within each round, and quotes no CPU ratio when a round lacks one", () => {
    const run = (round: number, name: string, cpuMsPerRequest: number | null): PhaseRun => ({ round, name, opsPerSecond: 1, p50: 1, p99: 1, errors: 0, cpuMsPerRequest });
    const runs = [run(1, "plaudit", 3), run(1, "like", 1), run(2, "like", 2), run(2, "plaudit", 5), run(3, "plaudit", 9), run(3, "like", 1)];
    expect(compare(runs, 3).ratios.map((r) => r.cpu)).toEqual([3, 2.5, 9]);
    expect(compare(runs, 3).medians[0]!.cpu).toBe(3);
    expect(compare([...runs.slice(0, 4), run(3, "plaudit", null), run(3, "like", 1)], 3).medians[0]!.cpu).toBeNull();
  });

  it("sets every Worker against the one-commit like, round by round, plaudit last, and has no rows without it", () => {
    const run = (round: number, name: string, p50: number, cpuMsPerRequest: number | null): PhaseRun => ({ round, name, opsPerSecond: 40, p50, p99: p50 * 3, errors: 0, cpuMsPerRequest });
    const runs = [
      run(1, "plaudit", 9, 10), run(1, "noop", 3, 2), run(1, "like", 6, 4), run(1, "contract", 6.6, 5),
      run(2, "contract", 4.4, 5), run(2, "like", 4, 4), run(2, "noop", 2, 2), run(2, "plaudit", 6, 8),
      run(3, "plaudit", 10, 12), run(3, "noop", 3, 2), run(3, "like", 5, null), run(3, "contract", 6, 5),
    ];
    const rows = yardstickRows(compare(runs, 3));
    expect(rows.map((r) => r[0])).toEqual(["worker", "reference noop", "reference like", "reference contract", "plaudit"]);
    // Each round's ratio first, then their median (contract: 1.1, 1.1, 1.2), not a ratio of the medians (6 / 5).
    expect(rows[3]).toEqual(["reference contract", "6", "18", "5", "1.1x", "1.1x", ""]);
    expect(rows[4]).toEqual(["plaudit", "9", "27", "10", "1.5x", "1.5x", ""]);
    expect(rows[2]!.slice(4, 6)).toEqual(["1x", "1x"]);
    // With CPU in every round, its ratio is quoted too.
    const withCpu = yardstickRows(compare(runs.map((r) => (r.cpuMsPerRequest === null ? { ...r, cpuMsPerRequest: 5 } : r)), 3));
    expect(withCpu[4]![6]).toBe("2.4x");
    expect(yardstickRows(compare(runs.filter((r) => r.name !== "like"), 3))).toEqual([]);
  });

  it("pools each Worker's answers over its rounds, and sets each percentile over the like reference's pooled one", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    // A phase's answers: `from` to `to` ms, one each, with an error the percentiles leave out.
    const answers = (from: number, to: number) => {
      const recorder = new Recorder();
      for (let ms = from; ms <= to; ms++) recorder.record("like", ms, "ok");
      recorder.record("like", 100_000, "error", "reset");
      return phaseSummary(recorder, 10);
    };
    const phases: Record<string, [number, number][]> = {
      plaudit: [[1, 1_000], [1_001, 2_000]],
      like: [[1, 500], [501, 1_000]],
      "front-pipeline": [[2, 1_001], [1_002, 2_001]],
    };
    const side = (name: string): Contender => {
      const left = [...phases[name]!];
      return { name, phase: async () => answers(...left.shift()!) };
    };
    const comparison = await runRounds(side("plaudit"), [side("like"), side("front-pipeline")], 2);
    // Plaudit's 2,000 answers together: the p99 is the 1,980th, which no one round's p99 (990, 1,990) is.
    expect(comparison.pooled).toEqual([
      { name: "plaudit", answers: 2_000, p50: 1_000, p99: 1_980, p999: 1_998 },
      { name: "like", answers: 1_000, p50: 500, p99: 990, p999: 999 },
      { name: "front-pipeline", answers: 2_000, p50: 1_001, p99: 1_981, p999: 1_999 },
    ]);
    expect(pooledRows(comparison)).toEqual([
      ["worker", "answers", "p50 ms", "p99 ms", "p99.9 ms", "over like: p50", "over like: p99", "over like: p99.9"],
      ["reference like", "1000", "500", "990", "999", "1x", "1x", "1x"],
      ["reference front-pipeline", "2000", "1001", "1981", "1999", "2x", "2x", "2x"],
      ["plaudit", "2000", "1000", "1980", "1998", "2x", "2x", "2x"],
    ]);
    expect(pooledRows({ ...comparison, pooled: comparison.pooled!.filter((p) => p.name !== "like") })).toEqual([]);
    expect(pooledRows(compare(comparison.runs, 2))).toEqual([]);
  });

  it("reports plaudit's rounds as one recorder: every request, error and wrong answer counts", () => {
    const first = new Recorder();
    first.record("like", 10, "ok");
    first.record("like", 20, "error", "reset");
    first.violation("wrong status");
    const second = new Recorder();
    second.record("like", 30, "ok");
    second.record("like", 5, "rejected");
    for (let i = 0; i < 60; i++) second.violation(`wrong ${i}`);
    const all = new Recorder();
    all.absorb(first);
    all.absorb(second);
    const { total } = all.summary(2);
    expect(total).toMatchObject({ count: 2, opsPerSecond: 1, errors: 1, rejected: 1 });
    expect(all.violationCount).toBe(61);
    expect(all.errorSamples).toEqual(["like: reset"]);
  });

  it("finds the spans of the answers at or past the p99, each from its request to its answer on the monotonic clock", () => {
    const first = new Recorder();
    const second = new Recorder();
    const before = monotonicMs();
    for (let ms = 1; ms <= 100; ms++) first.record("like", ms, "ok");
    for (let ms = 101; ms <= 200; ms++) second.record("unlike", ms, "ok");
    second.record("like", 10_000, "error", "reset");
    const after = monotonicMs();
    const all = new Recorder();
    all.absorb(first);
    all.absorb(second);
    // The p99 of 200 answers is the 198th: it and the two past it, every operation together, errors not at all.
    const slowest = all.slowest(99);
    expect(slowest.map(({ from, to }) => Math.round(to - from))).toEqual([198, 199, 200]);
    for (const { to } of slowest) expect(to).toBeGreaterThanOrEqual(before), expect(to).toBeLessThanOrEqual(after);
    expect(first.slowest(99).map(({ from, to }) => Math.round(to - from))).toEqual([99, 100]);
    expect(new Recorder().slowest(99)).toEqual([]);
  });

  it("looks behind each phase's slowest answers with --native, and sums what it found per side over the rounds", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const given: Window[][] = [];
    const side = (name: string, slow: Window[]): Contender => ({
      name,
      native: async () => ({
        stop: async (slowest: readonly Window[] = []) => {
          given.push([...slowest]);
          return {
            counts: new Map([["JavaScript (V8)", 3]]),
            behind: new Map([["garbage collection", slowest.length]]),
            flushes: { counts: new Map([["commit", 2]]), blockedMs: 1.5, behindMs: slowest.length },
          };
        },
      }),
      phase: async () => ({ total: { count: 10, opsPerSecond: 1, p50: 1, p99: 2, errors: 0 }, slowest: () => slow }) as Awaited<ReturnType<Contender["phase"]>>,
    });
    const slow = [{ from: 0, to: 30 }, { from: 10, to: 50 }];
    const { native, behind, flushes } = await runRounds(side("plaudit", slow), [side("like", [{ from: 5, to: 15 }])], 2);
    expect(given).toEqual([slow, [{ from: 5, to: 15 }], [{ from: 5, to: 15 }], slow]);
    expect(native?.get("plaudit")).toEqual(new Map([["JavaScript (V8)", 6]]));
    expect(behind?.get("plaudit")).toEqual({ counts: new Map([["garbage collection", 4]]), answers: 4, waitedMs: 140 });
    expect(behind?.get("like")).toEqual({ counts: new Map([["garbage collection", 2]]), answers: 2, waitedMs: 20 });
    // Flushes add up per side too, with the requests their phases answered.
    expect(flushes?.get("plaudit")).toEqual({ counts: new Map([["commit", 4]]), blockedMs: 3, behindMs: 4, requests: 20 });
    expect(flushes?.get("like")).toEqual({ counts: new Map([["commit", 4]]), blockedMs: 3, behindMs: 2, requests: 20 });
    // Without a sampler no phase's slowest answers are looked for.
    let asked = 0;
    const unsampled: Contender = {
      name: "plaudit",
      phase: async () =>
        ({
          total: { count: 10, opsPerSecond: 1, p50: 1, p99: 2, errors: 0 },
          slowest: () => {
            asked++;
            return slow;
          },
        }) as Awaited<ReturnType<Contender["phase"]>>,
    };
    const without = await runRounds(unsampled, [], 2);
    expect(without.behind).toBeUndefined();
    expect(without.flushes).toBeUndefined();
    expect(asked).toBe(0);
  });

  it("takes in the wrong answers of requests off the clock, every one counted, and none of their latencies", () => {
    const timed = new Recorder();
    timed.record("like", 10, "ok");
    const warmUp = new Recorder();
    warmUp.record("like", 500, "ok");
    warmUp.record("like", 20, "error", "reset");
    for (let i = 0; i < 60; i++) warmUp.violation(`wrong ${i}`);
    timed.absorbViolations(warmUp);
    expect(timed.violationCount).toBe(60);
    expect(timed.violations).toHaveLength(50);
    expect(timed.summary(1).total).toMatchObject({ count: 1, p99: 10, errors: 0 });
  });
});
