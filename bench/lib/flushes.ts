// `--native`, below the CPU: the disk flushes (fsync, fdatasync) of a
// server's processes, by what asked for each, and how long its event loop
// sat blocked in them. Locally every object's commit flushes its database
// on the one thread that runs every Worker and object, and while the flush
// waits for the disk that thread runs nothing else: no CPU sampler sees the
// wait (the thread is off the CPU), yet every answer in flight waits with
// it. The local runtime also keeps alarms in a database of its own
// (workerd's AlarmScheduler), so an alarm set or deleted is a flush of its
// own, and a checkpoint copies an object's write-ahead log into its
// database now and then. Each flush is traced at its start with its stack
// and at its end, on the monotonic clock the bench's request times use.
import { addCounts, tally, type NativePart } from "./part-counts";
import { perfFrame } from "./perf-record";
import type { Window } from "./recorder";

/** What a flush was for: the first whose frames match a frame of its stack names it. */
export const FLUSH_CAUSES: readonly NativePart[] = [
  { name: "object start (its database opened)", frames: /^workerd::Worker::Actor::Actor\b/ },
  { name: "object eviction (its database closed)", frames: /^(workerd::Worker::Actor::~Actor|workerd::SqliteDatabase::~SqliteDatabase)\b/ },
  { name: "alarm set (the local alarm store's commit)", frames: /^workerd::server::AlarmScheduler::setAlarm\b/ },
  { name: "alarm deleted (the local alarm store's commit)", frames: /^workerd::server::AlarmScheduler::deleteAlarm\b/ },
  { name: "checkpoint (a write-ahead log copied into its database)", frames: /^sqlite3WalCheckpoint\b/ },
  { name: "commit (an object's transaction, D1's included)", frames: /^(workerd::ActorSqlite::|sqlite3PagerCommitPhaseOne\b)/ },
];
export const FLUSH_OTHER = "other flushes";
/** Every cause, in the order a table prints them. */
export const FLUSH_ROWS = [...FLUSH_CAUSES.map((c) => c.name), FLUSH_OTHER];

/** One flush: its process and thread, when it began and ended (ms, monotonic) and what asked for it. */
export type Flush = { pid: number; tid: number; from: number; to: number; cause: string };

export function flushCause(frames: readonly string[]): string {
  for (const cause of FLUSH_CAUSES) if (frames.some((frame) => cause.frames.test(frame))) return cause.name;
  return FLUSH_OTHER;
}

/**
 * The flushes of `perf script -F pid,tid,time,event,ip,sym` over the
 * FLUSH_EVENTS (lib/native.ts records them): an entry (a header line, then its frames, each
 * on a line that begins with a tab, leaf first) and the same thread's exit.
 * An entry whose exit was not recorded (the trace ended first) is left out.
 */
export function parseFlushes(text: string): Flush[] {
  const flushes: Flush[] = [];
  const open = new Map<number, { pid: number; from: number; frames: string[] }>();
  let frames: string[] | null = null;
  for (const line of text.split("\n")) {
    if (line.startsWith("\t")) {
      frames?.push(perfFrame(line));
      continue;
    }
    frames = null;
    const header = /^\s*(\d+)\/(\d+)\s+(\d+\.\d+):\s+syscalls:sys_(enter|exit)_(?:fsync|fdatasync):/.exec(line);
    if (!header) continue;
    const [pid, tid, at] = [Number(header[1]), Number(header[2]), Number(header[3]) * 1000];
    if (header[4] === "enter") {
      frames = [];
      open.set(tid, { pid, from: at, frames });
      continue;
    }
    const entry = open.get(tid);
    if (!entry) continue;
    open.delete(tid);
    flushes.push({ pid, tid, from: entry.from, to: at, cause: flushCause(entry.frames) });
  }
  return flushes;
}

/** One phase's flushes by cause, the event loops' time blocked in them, and that time within each of the windows given. */
export type FlushTally = { counts: Map<string, number>; blockedMs: number; behindMs: number };

export function emptyFlushTally(): FlushTally {
  return { counts: new Map(), blockedMs: 0, behindMs: 0 };
}

/**
 * Tallies a phase's flushes: all of them by cause (whatever thread made
 * them), and, for those an event loop made (the main thread of a process
 * in `eventLoops`), the time it was blocked, in all and within `windows`
 * (a flush within two windows counts for both, as a sample does behind
 * the slowest answers).
 */
export function tallyFlushes(flushes: readonly Flush[], eventLoops: ReadonlySet<number>, windows: readonly Window[]): FlushTally {
  const counted = emptyFlushTally();
  for (const { pid, tid, from, to, cause } of flushes) {
    tally(counted.counts, cause);
    if (tid !== pid || !eventLoops.has(pid)) continue;
    counted.blockedMs += to - from;
    for (const window of windows) counted.behindMs += Math.max(0, Math.min(to, window.to) - Math.max(from, window.from));
  }
  return counted;
}

/** Adds one phase's tally into a side's running total. */
export function addFlushes(total: FlushTally, phase: FlushTally): void {
  addCounts(total.counts, phase.counts);
  total.blockedMs += phase.blockedMs;
  total.behindMs += phase.behindMs;
}

/** perf record's events for the trace: each call's entry with its stack, its exit without. */
export const FLUSH_EVENTS = ["fsync", "fdatasync"].flatMap((call) => ["-e", `syscalls:sys_enter_${call}/call-graph=fp/`, "-e", `syscalls:sys_exit_${call}/call-graph=no/`]);

/** The `perf script` fields parseFlushes reads. */
export const FLUSH_FIELDS = "pid,tid,time,event,ip,sym";
