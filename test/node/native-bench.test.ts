import { describe, expect, it } from "vitest";
import { eventLoopBehind, NATIVE_REST, NATIVE_ROWS, nativeMsPerRequest, nativePart, parsePerfScript, PROXY, SAMPLE_MS, type PerfSample } from "../../bench/lib/native";
import { behindRows, compare, nativeRows, type PhaseRun } from "../../bench/lib/reference";

// Two samples as `perf script -F pid,ip,sym` prints them: a header line (the pid right-aligned), then frames, leaf first.
const SCRIPT = [
  "  25497 ",
  "\tffffffff81b36760 iowrite16",
  "\tffffffff817435cb __x64_sys_fsync",
  "\t         2f0a001 sqlite3PagerCommitPhaseOne",
  "\t         2cdd2a2 workerd::SqliteDatabase::Query::nextRow",
  "\t         2d1156b workerd::Worker::Actor::Actor(workerd::Worker const&)",
  "",
  "   2548 ",
  "\t    55cfb61a9953 [unknown]",
  "\t         389c067 Builtins_InterpreterEntryTrampoline",
  "",
].join("\n");

describe("the native sampler's parts (bench --native)", () => {
  it("reads each sample's process and frames, leaf first", () => {
    const samples = parsePerfScript(SCRIPT);
    expect(samples.map((s) => s.pid)).toEqual([25497, 2548]);
    expect(samples[0]!.frames[0]).toBe("iowrite16");
    expect(samples[0]!.frames.at(-1)).toBe("workerd::Worker::Actor::Actor(workerd::Worker const&)");
    expect(samples[1]!.frames).toEqual(["[unknown]", "Builtins_InterpreterEntryTrampoline"]);
  });

  it("gives a sample to its context when it has one, else to the work nearest its leaf", () => {
    const [started, js] = parsePerfScript(SCRIPT);
    // An object's start is a context: the flush under it is the start's cost.
    expect(nativePart(started!.frames)).toMatch(/^object start/);
    expect(nativePart(started!.frames.slice(0, 4))).toBe("commit flush to disk (fsync)");
    expect(nativePart(started!.frames.slice(2, 4))).toBe("SQL run and commit (no flush)");
    expect(nativePart(js!.frames)).toBe("JavaScript (V8)");
    // A send JavaScript asked for is I/O; the parse inside a prepare is its compile; a collection is not JavaScript.
    expect(nativePart(["tcp_sendmsg", "__sys_sendto", "Builtins_CallFunction", "[unknown]"])).toBe("network and object-call I/O");
    expect(nativePart(["yy_reduce", "sqlite3RunParser", "sqlite3Prepare", "workerd::SqliteDatabase::prepareSql", "v8::Function::Call"])).toBe("SQL compile (prepare)");
    expect(nativePart(["v8::internal::Scavenger::ScavengeObject", "v8::internal::Heap::CollectGarbage", "Builtins_CEntry"])).toBe("garbage collection");
    expect(nativePart(["v8::internal::MainMarkingVisitor::VisitPointers", "v8::internal::MarkCompactCollector::MarkLiveObjects", "v8::internal::Heap::CollectGarbage"])).toBe(
      "garbage collection",
    );
    expect(nativePart(["__x64_sys_fsync", "sqlite3_step", "workerd::server::AlarmScheduler::setAlarm"])).toMatch(/^alarm store/);
    // An unnamed leaf (a kernel frame whose address is hidden, JIT code) says nothing: the named frames above it decide.
    expect(nativePart(["[unknown]", "[unknown]", "sqlite3_step"])).toBe("SQL run and commit (no flush)");
    expect(nativePart(["[unknown]", "Builtins_JSEntry"])).toBe("JavaScript (V8)");
    expect(nativePart(["[unknown]"])).toBe(NATIVE_REST);
    expect(nativePart(["kj::EventLoop::turn"])).toBe(NATIVE_REST);
  });

  it("reads each sample's thread and time, in ms on the monotonic clock, when the script prints them", () => {
    const samples = parsePerfScript(["  6559/6561  61774.574992: ", "\t         2d1156b workerd::Worker::Actor::~Actor()", "", " 6559/6559  61774.6: ", "\t  38993c2 Builtins_JSEntry", ""].join("\n"));
    expect(samples.map(({ pid, tid, at }) => ({ pid, tid, at }))).toEqual([
      { pid: 6559, tid: 6561, at: 61774574.992 },
      { pid: 6559, tid: 6559, at: 61774600 },
    ]);
    expect(parsePerfScript(SCRIPT)[0]).toMatchObject({ tid: null, at: null });
  });

  it("gives an evicted object's database close, and the flush under it, to the eviction", () => {
    const closing = ["__x64_sys_fsync", "sqlite3Close", "workerd::SqliteDatabase::~SqliteDatabase", "workerd::Worker::Actor::~Actor()"];
    expect(nativePart(closing)).toMatch(/^object eviction/);
    expect(nativePart(closing.slice(0, 3))).toBe("commit flush to disk (fsync)");
  });

  it("counts what the event loop did within each slow answer's span, and nothing of the proxy, other threads or other times", () => {
    const sample = (pid: number, tid: number | null, at: number | null, frames: string[]): PerfSample => ({ pid, tid, at, frames });
    const js = ["Builtins_JSEntry"];
    const gc = ["v8::internal::Heap::CollectGarbage"];
    const samples = [
      sample(10, 10, 100, js),
      sample(10, 10, 105, gc),
      sample(10, 10, 150, js),
      sample(10, 12, 101, js),
      sample(20, 20, 102, js),
      sample(10, 10, null, js),
    ];
    // Two overlapping spans: the sample at 105 lies in both; the one at 150 in neither. Process 20 is the proxy; thread 12 is not the loop.
    const behind = eventLoopBehind(samples, new Set([20]), [
      { from: 99, to: 106 },
      { from: 104, to: 110 },
    ]);
    expect(behind).toEqual(
      new Map([
        ["JavaScript (V8)", 1],
        ["garbage collection", 2],
      ]),
    );
    expect(eventLoopBehind(samples, new Set([20]), [])).toEqual(new Map());
  });

  it("tables the loop's CPU per slow answer by part beside those answers' latency, plaudit last, without the proxy", () => {
    const run = (name: string): PhaseRun => ({ round: 1, name, opsPerSecond: 40, p50: 5, p99: 9, errors: 0, cpuMsPerRequest: 1 });
    const behind = new Map([
      ["plaudit", { counts: new Map([["garbage collection", 10], ["JavaScript (V8)", 5]]), answers: 5, waitedMs: 250 }],
      ["like", { counts: new Map([["JavaScript (V8)", 4]]), answers: 4, waitedMs: 80 }],
      ["noop", { counts: new Map<string, number>(), answers: 0, waitedMs: 0 }],
    ]);
    const rows = behindRows({ ...compare([run("plaudit"), run("like"), run("noop")], 1), behind });
    expect(rows[0]!.slice(1)).toEqual(["reference like", "reference noop", "plaudit"]);
    expect(rows.map((r) => r[0])).toEqual([
      "part (the event loop's CPU ms while one of the answers at or past the p99 was on its way)",
      ...NATIVE_ROWS.filter((part) => part !== PROXY),
      "all",
      "those answers' latency (mean ms)",
      "answers looked behind",
    ]);
    const row = (part: string) => rows.find((r) => r[0] === part)!.slice(1);
    expect(row("garbage collection")).toEqual(["0.00", "", (2 * SAMPLE_MS).toFixed(2)]);
    expect(row("all")).toEqual([SAMPLE_MS.toFixed(2), "", (3 * SAMPLE_MS).toFixed(2)]);
    expect(row("those answers' latency (mean ms)")).toEqual(["20.00", "", "50.00"]);
    expect(row("answers looked behind")).toEqual(["4", "0", "5"]);
    expect(behindRows(compare([run("plaudit")], 1))).toEqual([]);
  });

  it("splits a side's CPU per request by its shares of samples", () => {
    const counts = new Map([
      ["JavaScript (V8)", 30],
      [PROXY, 10],
    ]);
    const split = nativeMsPerRequest(counts, 8)!;
    expect(split.get("JavaScript (V8)")).toBeCloseTo(6, 9);
    expect(split.get(PROXY)).toBeCloseTo(2, 9);
    expect([...split.values()].reduce((a, b) => a + b, 0)).toBeCloseTo(8, 9);
    expect(nativeMsPerRequest(counts, null)).toBeNull();
    expect(nativeMsPerRequest(new Map(), 8)).toBeNull();
  });

  it("tables every part per Worker, plaudit last, from the median CPU of its phases", () => {
    const run = (round: number, name: string, cpu: number): PhaseRun => ({ round, name, opsPerSecond: 40, p50: 5, p99: 9, errors: 0, cpuMsPerRequest: cpu });
    const runs = [run(1, "plaudit", 10), run(1, "like", 4), run(2, "like", 6), run(2, "plaudit", 12), run(3, "plaudit", 30), run(3, "like", 5)];
    const native = new Map([
      ["plaudit", new Map([["commit flush to disk (fsync)", 1], [PROXY, 1]])],
      ["like", new Map([[PROXY, 5]])],
    ]);
    const rows = nativeRows({ ...compare(runs, 3), native });
    expect(rows[0]).toEqual(["part (CPU ms per request)", "reference like", "plaudit"]);
    expect(rows.map((r) => r[0])).toEqual(["part (CPU ms per request)", ...NATIVE_ROWS, "all"]);
    const row = (part: string) => rows.find((r) => r[0] === part)!;
    // Medians: plaudit 12, like 5; plaudit's samples split half and half.
    expect(row("commit flush to disk (fsync)")).toEqual(["commit flush to disk (fsync)", "0.00", "6.00"]);
    expect(row(PROXY)).toEqual([PROXY, "5.00", "6.00"]);
    expect(row("all")).toEqual(["all", "5", "12"]);
    expect(nativeRows(compare(runs, 3))).toEqual([]);
  });
});
