import { describe, expect, it } from "vitest";
import { FLUSH_OTHER, FLUSH_ROWS, flushCause, parseFlushes, tallyFlushes, type Flush } from "../../bench/lib/flushes";
import { compare, flushRows, type PhaseRun } from "../../bench/lib/reference";

const COMMIT = "commit (an object's transaction, D1's included)";
const ALARM_SET = "alarm set (the local alarm store's commit)";
const ALARM_DELETED = "alarm deleted (the local alarm store's commit)";
const CHECKPOINT = "checkpoint (a write-ahead log copied into its database)";

/** A flush's entry as `perf script -F pid,tid,time,event,ip,sym` prints it: a header, then its frames, leaf first. */
const enter = (pid: number, tid: number, seconds: string, frames: string[], call = "fsync") =>
  [`${pid}/${tid} ${seconds}:     syscalls:sys_enter_${call}: `, ...frames.map((frame) => `\t         32ee964 ${frame}`), "", ""].join("\n");
/** Its exit: no stack, the address and symbol on the header's line. */
const exit = (pid: number, tid: number, seconds: string, call = "fsync") => `${pid}/${tid} ${seconds}:      syscalls:sys_exit_${call}:      7ff082b1cc20 ${call}\n`;

const COMMIT_FRAMES = ["fsync", "pagerWalFrames", "sqlite3PagerCommitPhaseOne", "workerd::SqliteDatabase::Query::nextRow", "workerd::ActorSqlite::startImplicitTxn()::$_0::operator()"];
const ALARM_SET_FRAMES = ["fsync", "pagerWalFrames", "sqlite3PagerCommitPhaseOne", "workerd::server::AlarmScheduler::setAlarm(workerd::ActorKey, kj::Date)", "workerd::ActorSqlite::startPrecommitAlarmScheduling()"];
const ALARM_DELETED_FRAMES = ["fsync", "sqlite3PagerCommitPhaseOne", "workerd::server::AlarmScheduler::deleteAlarm(workerd::ActorKey)", "workerd::ActorSqlite::scheduleLaterAlarm()"];
const CHECKPOINT_FRAMES = ["fsync", "sqlite3WalCheckpoint", "workerd::ActorSqlite::Hooks::checkpoint", "workerd::ActorSqlite::startImplicitTxn()::$_0::operator()"];

describe("the flush tracer's reading of perf (bench --native)", () => {
  it("pairs each flush's entry with its thread's exit, names its cause from its stack, and drops one the trace cut off", () => {
    const text = [
      // perf right-aligns the process id: a header may begin with spaces.
      `  ${enter(10, 10, "100.000100", COMMIT_FRAMES)}`,
      // Another thread's flush begins and ends inside the first one.
      enter(10, 11, "100.000200", CHECKPOINT_FRAMES, "fdatasync"),
      exit(10, 11, "100.000700", "fdatasync"),
      exit(10, 10, "100.002100"),
      enter(10, 10, "100.003000", ALARM_SET_FRAMES),
      exit(10, 10, "100.003500"),
      enter(10, 10, "100.004000", ALARM_DELETED_FRAMES),
      exit(10, 10, "100.004250"),
      // An exit with no entry (the trace began inside it), then an entry with no exit (it ended inside one).
      exit(10, 12, "100.005000"),
      enter(10, 10, "100.006000", ["fsync", "kj::UnixEventPort::wait"]),
    ].join("");
    const flushes = parseFlushes(text);
    expect(flushes.map(({ tid, cause }) => [tid, cause])).toEqual([
      [11, CHECKPOINT],
      [10, COMMIT],
      [10, ALARM_SET],
      [10, ALARM_DELETED],
    ]);
    expect(flushes[1]!.from).toBeCloseTo(100_000.1, 6);
    expect(flushes[1]!.to - flushes[1]!.from).toBeCloseTo(2, 6);
    expect(flushes[0]!.to - flushes[0]!.from).toBeCloseTo(0.5, 6);
  });

  it("names an alarm store's commit by the alarm, not by the commit or checkpoint inside it, and an object's start and close by the object", () => {
    expect(flushCause(["fsync", "sqlite3WalCheckpoint", "sqlite3_wal_checkpoint_v2", "workerd::server::AlarmScheduler::setAlarm(x)"])).toBe(ALARM_SET);
    expect(flushCause(["fsync", "syncJournal", "sqlite3PagerCommitPhaseOne", "workerd::Worker::Actor::Actor(workerd::Worker const&)"])).toBe("object start (its database opened)");
    expect(flushCause(["fsync", "sqlite3WalCheckpoint", "sqlite3WalClose", "workerd::SqliteDatabase::~SqliteDatabase()"])).toBe("object eviction (its database closed)");
    expect(flushCause(["fsync", "[unknown]"])).toBe(FLUSH_OTHER);
    expect(FLUSH_ROWS.at(-1)).toBe(FLUSH_OTHER);
  });

  it("counts every flush by cause, and an event loop's blocked time in all and within each window it overlaps", () => {
    const flushes: Flush[] = [
      { pid: 10, tid: 10, from: 0, to: 4, cause: COMMIT },
      { pid: 10, tid: 10, from: 10, to: 12, cause: ALARM_SET },
      // Another thread of the same process, and the proxy's main thread: counted, but no event loop waited.
      { pid: 10, tid: 11, from: 1, to: 9, cause: CHECKPOINT },
      { pid: 20, tid: 20, from: 1, to: 9, cause: COMMIT },
    ];
    const tally = tallyFlushes(flushes, new Set([10]), [
      { from: 2, to: 11 },
      { from: 3, to: 11 },
    ]);
    expect(tally.counts).toEqual(new Map([[COMMIT, 2], [ALARM_SET, 1], [CHECKPOINT, 1]]));
    expect(tally.blockedMs).toBe(6);
    // The commit: 2 ms in the first window, 1 in the second; the alarm's: 1 in each.
    expect(tally.behindMs).toBe(5);
    expect(tallyFlushes(flushes, new Set([10]), []).behindMs).toBe(0);
  });

  it("gives flushes and blocked time per request, and per slowest answer, one column per Worker, plaudit last", () => {
    const run = (name: string): PhaseRun => ({ round: 1, name, opsPerSecond: 40, p50: 5, p99: 20, errors: 0 });
    const comparison = {
      ...compare([run("plaudit"), run("like")], 1),
      behind: new Map([
        ["plaudit", { counts: new Map(), answers: 4, waitedMs: 160 }],
        ["like", { counts: new Map(), answers: 2, waitedMs: 40 }],
      ]),
      flushes: new Map([
        ["plaudit", { counts: new Map([[COMMIT, 300], [ALARM_SET, 100]]), blockedMs: 200, behindMs: 40, requests: 100 }],
        ["like", { counts: new Map([[COMMIT, 150]]), blockedMs: 50, behindMs: 6, requests: 100 }],
      ]),
    };
    const rows = flushRows(comparison);
    expect(rows[0]).toEqual(["flushes to disk (fsync, fdatasync), per request", "reference like", "plaudit"]);
    const row = (label: string) => rows.find((r) => r[0] === label)!.slice(1);
    expect(row(COMMIT)).toEqual(["1.50", "3.00"]);
    expect(row(ALARM_SET)).toEqual(["0.00", "1.00"]);
    expect(row("all")).toEqual(["1.50", "4.00"]);
    expect(row("the event loop blocked in them, ms per request")).toEqual(["0.50", "2.00"]);
    expect(row("the event loop blocked in them while one of the answers at or past the p99 was on its way, ms per such answer")).toEqual(["3.00", "10.00"]);
    expect(row("those answers' latency (mean ms)")).toEqual(["20.00", "40.00"]);
    expect(flushRows(compare([run("plaudit")], 1))).toEqual([]);
  });
});
