// `--native`: where a server's CPU goes below the JavaScript, from the
// operating system's sampler (Linux `perf`). The isolate's profile
// (`npm run bench:profile`) sees only the Worker's JavaScript, about a third
// of a local server's CPU; the rest is the runtime's: SQLite's statements and
// the disk flush of every commit, objects started after an eviction, the
// alarms' own store, the proxy `wrangler dev` puts in front of the Worker.
// Each phase samples every workerd process of its server. A sample belongs
// to the context its stack runs in when it has one (an object starting, the
// alarm store), else to the part of the frame nearest its leaf that names
// one: the work being done at that instant, not the code that asked for it
// (a flush asked for by SQL asked for by JavaScript is the flush). Shares of
// samples, times the server's CPU per request from its own counters
// (lib/cpu.ts), give each part's milliseconds per request. The samples of
// the server's event-loop thread taken while one of a phase's slowest
// answers was on its way say what those answers waited behind.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { workerdProcesses } from "./cpu";
import { FLUSH_EVENTS, FLUSH_FIELDS, parseFlushes, tallyFlushes, type FlushTally } from "./flushes";
import { sampleCount, tally, type NativeCounts, type NativePart } from "./part-counts";
import { PerfRecord, perfFrame } from "./perf-record";
import type { Window } from "./recorder";

/** The proxy `wrangler dev` runs in front of the Worker: the workerd serving the server's own port. */
export const PROXY = "wrangler dev's proxy (every request, every side)";

/**
 * Contexts: a sample with any of these frames on its stack belongs to the
 * first that matches. A collection is one too: its own frames are many and
 * mostly unnamed here, and every one of them is the collector's work.
 */
export const NATIVE_CONTEXTS: readonly NativePart[] = [
  { name: "object start (an evicted or new object's database opened)", frames: /^workerd::Worker::Actor::Actor\b/ },
  { name: "object eviction (an idle object's database closed)", frames: /^workerd::Worker::Actor::~Actor\b/ },
  { name: "alarm store (setAlarm and deleteAlarm, a database of its own locally)", frames: /^workerd::(server::)?AlarmScheduler::/ },
  {
    name: "garbage collection",
    frames: /^(v8::internal::(Heap::|ScavengerCollector|Scavenger::|MarkCompactCollector|MinorMarkSweepCollector|ConcurrentMarking|IncrementalMarking|Sweeper|MarkingBarrier)|cppgc::internal::(Marker|Sweeper))/,
  },
];

const SQL_RUN = "SQL run and commit (no flush)";
const SQL_COMPILE = "SQL compile (prepare)";
const PREPARE = /^(sqlite3Prepare|sqlite3LockAndPrepare)\b/;

/** Work: otherwise a sample belongs to the part of the frame nearest its leaf that one names. */
export const NATIVE_WORK: readonly NativePart[] = [
  { name: "commit flush to disk (fsync)", frames: /^(__\w+_sys_fsync|__\w+_sys_fdatasync|do_fsync)$/ },
  { name: SQL_COMPILE, frames: PREPARE },
  { name: SQL_RUN, frames: /^(sqlite3|workerd::SqliteDatabase::)/ },
  { name: "network and object-call I/O", frames: /^(tcp_|sock_|__sys_|ip_|unix_stream|capnp::|kj::(AsyncIoStream|HttpService|HttpClient|_::.*Http))/ },
  { name: "JavaScript (V8)", frames: /^(Builtins_|v8::)/ },
];
export const NATIVE_REST = "the runtime's other native work";

/** One sample: its process and thread, when it was taken (ms on the monotonic clock) and its frames, leaf first. */
export type PerfSample = { pid: number; tid: number | null; at: number | null; frames: string[] };

/**
 * The samples of `perf script -F pid,tid,time,ip,sym` (or `-F pid,ip,sym`):
 * a header line with the process id (right-aligned, so it may start with
 * spaces), then `/` and the thread's and the time in seconds, then one frame
 * a line (each begins with a tab), leaf first.
 */
export function parsePerfScript(text: string): PerfSample[] {
  const samples: PerfSample[] = [];
  let current: string[] | null = null;
  for (const line of text.split("\n")) {
    if (line.startsWith("\t")) {
      current?.push(perfFrame(line));
      continue;
    }
    const header = /^\s*(\d+)(?:\/(\d+))?(?:\s+(\d+\.\d+):)?\s*$/.exec(line);
    if (header) {
      samples.push({
        pid: Number(header[1]),
        tid: header[2] === undefined ? null : Number(header[2]),
        at: header[3] === undefined ? null : Number(header[3]) * 1000,
        frames: (current = []),
      });
    } else current = null;
  }
  return samples;
}

/**
 * The samples of a server's event loop (the main thread of a workerd that is
 * not the proxy: locally it runs every Worker and object) taken within each
 * of `windows`, by part: a sample within two windows counts for both, so
 * the counts over the number of windows are what the loop did, on average,
 * while one of those answers was on its way.
 */
export function eventLoopBehind(samples: readonly PerfSample[], proxies: ReadonlySet<number>, windows: readonly Window[]): NativeCounts {
  const counts: NativeCounts = new Map();
  for (const { pid, tid, at, frames } of samples) {
    if (proxies.has(pid) || tid !== pid || at === null) continue;
    const within = windows.filter(({ from, to }) => at >= from && at <= to).length;
    if (within > 0) tally(counts, nativePart(frames), within);
  }
  return counts;
}

/** The part a sample's stack belongs to. */
export function nativePart(frames: readonly string[]): string {
  for (const context of NATIVE_CONTEXTS) if (frames.some((frame) => context.frames.test(frame))) return context.name;
  for (const frame of frames) {
    // An unnamed frame says nothing of the work: JIT code is named by the builtins that entered it.
    if (frame === "[unknown]") continue;
    const part = NATIVE_WORK.find((p) => p.frames.test(frame));
    if (!part) continue;
    // A statement's parse runs inside sqlite3Prepare, further from the leaf than the parser's own frames.
    if (part.name === SQL_RUN && frames.some((f) => PREPARE.test(f))) return SQL_COMPILE;
    return part.name;
  }
  return NATIVE_REST;
}

/** The workerd processes of a process group (as lib/cpu.ts counts them), with the proxy (the one serving `port`) told apart. */
function serverProcesses(group: number, port: number): { pid: number; proxy: boolean }[] {
  return (workerdProcesses(group) ?? []).flatMap(({ pid }) => {
    try {
      // Arguments are NUL-separated: the proxy's entry socket is the server's own port.
      const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\u0000");
      return [{ pid, proxy: args.includes(`--socket-addr=entry=127.0.0.1:${port}`) }];
    } catch {
      return []; // The process ended meanwhile.
    }
  });
}

/**
 * Why `perf` cannot sample here, or null when it can: it records a trivial
 * command, and it must see the kernel's side too (the flushes and the I/O
 * are there), which an unprivileged user gets only at perf_event_paranoid
 * 1 or less and with kernel addresses shown, and open the tracepoints the
 * flushes are traced at (lib/flushes.ts), only at -1.
 */
export function perfMissing(): string | null {
  if (process.getuid?.() !== 0) {
    const setting = (name: string) => Number(readFileSync(`/proc/sys/kernel/${name}`, "utf8").trim());
    if (setting("perf_event_paranoid") > -1 || setting("kptr_restrict") > 0) {
      return "--native: perf would see no kernel frames or tracepoints here (perf_event_paranoid above -1, or kptr_restrict set): run as root, or lower them";
    }
  }
  const dir = mkdtempSync(join(tmpdir(), "plaudit-native-probe-"));
  try {
    // The flushes are traced at the fsync system call's tracepoints (lib/flushes.ts), which perf must be allowed to open too.
    const probe = spawnSync("perf", ["record", "-q", "-e", "cpu-clock", "-e", "syscalls:sys_enter_fsync", "-o", join(dir, "probe.data"), "--", "true"], { encoding: "utf8" });
    if (probe.error) return "--native samples with Linux `perf`, which is not installed here (Debian: apt-get install linux-perf)";
    if (probe.status !== 0) return `--native: perf cannot record here (${probe.stderr.trim().split("\n").at(-1) ?? `exit ${probe.status}`}); see /proc/sys/kernel/perf_event_paranoid`;
    return null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Samples a second; `cpu-clock` so each sample stands for the same CPU time whatever the processor exposes. */
const SAMPLE_HZ = 499;
/** The CPU time one sample stands for. */
export const SAMPLE_MS = 1000 / SAMPLE_HZ;

/** One phase's samples by part (the proxy's apart), those of its event loop behind the answers `stop` was given, and its flushes (lib/flushes.ts). */
export type NativePhase = { counts: NativeCounts; behind: NativeCounts; flushes: FlushTally };

/** One phase's sampling of a server, and the trace of its flushes; `stop` ends both and counts them. */
export class NativeSampler {
  private constructor(
    private readonly samples: PerfRecord,
    private readonly flushes: PerfRecord,
    private readonly proxies: ReadonlySet<number>,
    private readonly eventLoops: ReadonlySet<number>,
  ) {}

  /** Starts sampling a server's workerd processes, and tracing their flushes. */
  static async start(group: number, port: number): Promise<NativeSampler> {
    const processes = serverProcesses(group, port);
    if (processes.length === 0) throw new Error(`--native: no workerd process in process group ${group}`);
    const proxies = processes.filter((p) => p.proxy).length;
    if (proxies !== 1) {
      console.error(`--native: ${proxies} workerd processes serve port ${port}; the proxy's samples are not told apart, and its event loop counts as the Worker's behind the slowest answers`);
    }
    const pids = ["-p", processes.map((p) => p.pid).join(",")];
    const samples = await PerfRecord.start("the CPU", ["-e", "cpu-clock", "-F", String(SAMPLE_HZ), "-g", ...pids]);
    const flushes = await PerfRecord.start("the flushes", [...FLUSH_EVENTS, ...pids]).catch(async (error: unknown) => {
      await samples.stop("pid").catch(() => undefined);
      throw error;
    });
    return new NativeSampler(
      samples,
      flushes,
      new Set(processes.filter((p) => p.proxy).map((p) => p.pid)),
      new Set(processes.filter((p) => !p.proxy).map((p) => p.pid)),
    );
  }

  /** Ends the sampling and the trace; `slowest`: the spans of the answers to look behind (the phase's slowest). */
  async stop(slowest: readonly Window[] = []): Promise<NativePhase> {
    const [sampled, flushed] = await Promise.allSettled([this.samples.stop("pid,tid,time,ip,sym"), this.flushes.stop(FLUSH_FIELDS)]);
    if (sampled.status === "rejected") throw sampled.reason;
    if (flushed.status === "rejected") throw flushed.reason;
    const samples = parsePerfScript(sampled.value);
    const counts: NativeCounts = new Map();
    for (const { pid, frames } of samples) tally(counts, this.proxies.has(pid) ? PROXY : nativePart(frames));
    return { counts, behind: eventLoopBehind(samples, this.proxies, slowest), flushes: tallyFlushes(parseFlushes(flushed.value), this.eventLoops, slowest) };
  }
}

/** Every part's name, in the order the table prints them. */
export const NATIVE_ROWS = [...NATIVE_CONTEXTS, ...NATIVE_WORK].map((p) => p.name).concat(NATIVE_REST, PROXY);

/**
 * A side's milliseconds per request in each part: its share of the side's
 * samples times the side's CPU per request (null when either is unknown).
 */
export function nativeMsPerRequest(counts: NativeCounts, cpuMsPerRequest: number | null): Map<string, number> | null {
  const total = sampleCount(counts);
  if (total === 0 || cpuMsPerRequest === null) return null;
  return new Map(NATIVE_ROWS.map((part) => [part, ((counts.get(part) ?? 0) / total) * cpuMsPerRequest]));
}
