// `--native`: where a server's CPU goes below the JavaScript, from the
// operating system's sampler (Linux `perf`). The isolate's profile
// (`npm run bench:profile`) sees only the Worker's JavaScript, about a third
// of a local server's CPU; the rest is the runtime's: SQLite's statements and
// the disk flush of every commit, objects started after an eviction, the
// alarms' own store, the proxy `wrangler dev` puts in front of the Worker.
// Each phase samples every workerd process of its server, and each sample
// goes to the first part, in PARTS' order, that any frame of its stack
// names. Shares of samples, times the server's CPU per request from its
// own counters (lib/cpu.ts), give each part's milliseconds per request.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A part of a server's native CPU, and the frames that put a sample in it. */
export type NativePart = { name: string; frames: RegExp };

/** The proxy `wrangler dev` runs in front of the Worker: the workerd serving the server's own port. */
export const PROXY = "wrangler dev's proxy (every request, every side)";

/** In order: a sample belongs to the first part whose pattern matches a frame of its stack. */
export const NATIVE_PARTS: readonly NativePart[] = [
  { name: "object start (an evicted or new object's database opened)", frames: /^workerd::Worker::Actor::Actor\b/ },
  { name: "alarm store (setAlarm and deleteAlarm, a database of its own locally)", frames: /^workerd::server::AlarmScheduler::|^workerd::AlarmScheduler::/ },
  { name: "commit flush to disk (fsync)", frames: /^(__x64_sys_fsync|__x64_sys_fdatasync|do_fsync)$/ },
  { name: "SQL compile (prepare)", frames: /^(sqlite3Prepare|sqlite3LockAndPrepare)\b/ },
  { name: "SQL run and commit (no flush)", frames: /^(sqlite3|workerd::SqliteDatabase::)/ },
  { name: "garbage collection", frames: /^(v8::internal::(Heap::|Scavenger|MarkCompact|MinorMarkSweep|ConcurrentMarking|IncrementalMarking)|cppgc::internal::(Marker|Sweeper))/ },
  { name: "JavaScript (V8)", frames: /^(Builtins_|v8::|\[unknown\]$)/ },
  { name: "network and object-call I/O", frames: /^(tcp_|sock_|__sys_|ip_|unix_stream|capnp::|kj::(AsyncIoStream|HttpService|HttpClient|_::.*Http))/ },
];
export const NATIVE_REST = "the runtime's other native work";

/** Samples per part, for one server over the phases sampled. */
export type NativeCounts = Map<string, number>;

/** The samples of `perf script -F pid,ip,sym`: a header line with the process id, then one indented frame a line, leaf first. */
export function parsePerfScript(text: string): { pid: number; frames: string[] }[] {
  const samples: { pid: number; frames: string[] }[] = [];
  let current: string[] | null = null;
  for (const line of text.split("\n")) {
    if (line.trim() === "") {
      current = null;
      continue;
    }
    if (!/^\s/.test(line)) {
      current = [];
      samples.push({ pid: Number(line.trim().split(/\s+/)[0]), frames: current });
      continue;
    }
    // "\t    55cfb61a9953 symbol name (args)": the address, then the symbol.
    const frame = line.trim().replace(/^[0-9a-f]+\s*/, "");
    current?.push(frame === "" ? "[unknown]" : frame);
  }
  return samples;
}

/** The part a sample's stack belongs to. */
export function nativePart(frames: readonly string[]): string {
  for (const part of NATIVE_PARTS) if (frames.some((frame) => part.frames.test(frame))) return part.name;
  return NATIVE_REST;
}

/** The workerd processes of a process group, with the proxy (the one serving `port`) told apart. */
function workerdProcesses(group: number, port: number): { pid: number; proxy: boolean }[] {
  const found: { pid: number; proxy: boolean }[] = [];
  for (const name of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== group || !stat.includes("(workerd)")) continue;
      const command = readFileSync(`/proc/${name}/cmdline`, "utf8");
      found.push({ pid: Number(name), proxy: command.includes(`entry=127.0.0.1:${port}\u0000`) });
    } catch {
      continue; // The process ended meanwhile.
    }
  }
  return found;
}

/** Whether `perf` can be run here; the reason when not. */
export function perfMissing(): string | null {
  const probe = spawnSync("perf", ["--version"], { encoding: "utf8" });
  if (probe.error || probe.status !== 0) return "--native samples with Linux `perf`, which is not installed here (Debian: apt-get install linux-perf)";
  return null;
}

/** Samples a second; `cpu-clock` so each sample stands for the same CPU time whatever the processor exposes. */
const SAMPLE_HZ = 499;

/** One phase's sampling of a server; `stop` ends it and counts its samples by part (the proxy's apart). */
export class NativeSampler {
  readonly #dir = mkdtempSync(join(tmpdir(), "plaudit-native-"));
  readonly #perf: ChildProcess;
  readonly #proxies: Set<number>;
  readonly #exited: Promise<void>;

  constructor(group: number, port: number) {
    const processes = workerdProcesses(group, port);
    if (processes.length === 0) throw new Error(`no workerd process in process group ${group}`);
    this.#proxies = new Set(processes.filter((p) => p.proxy).map((p) => p.pid));
    const pids = processes.map((p) => p.pid).join(",");
    this.#perf = spawn("perf", ["record", "-q", "-e", "cpu-clock", "-F", String(SAMPLE_HZ), "-g", "-p", pids, "-o", join(this.#dir, "perf.data")], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    this.#exited = new Promise((resolve) => this.#perf.once("exit", () => resolve()));
  }

  async stop(): Promise<NativeCounts> {
    this.#perf.kill("SIGINT");
    await this.#exited;
    try {
      const script = spawnSync("perf", ["script", "-i", join(this.#dir, "perf.data"), "-F", "pid,ip,sym"], { encoding: "utf8", maxBuffer: 1 << 30 });
      const counts: NativeCounts = new Map();
      for (const { pid, frames } of parsePerfScript(script.stdout ?? "")) {
        const part = this.#proxies.has(pid) ? PROXY : nativePart(frames);
        counts.set(part, (counts.get(part) ?? 0) + 1);
      }
      return counts;
    } finally {
      rmSync(this.#dir, { recursive: true, force: true });
    }
  }
}

/** Adds one phase's counts into a side's running total. */
export function addCounts(total: NativeCounts, phase: NativeCounts): void {
  for (const [part, n] of phase) total.set(part, (total.get(part) ?? 0) + n);
}

/** Every part's name, in the order the table prints them. */
export const NATIVE_ROWS = [...NATIVE_PARTS.map((p) => p.name), NATIVE_REST, PROXY];

/**
 * A side's milliseconds per request in each part: its share of the side's
 * samples times the side's CPU per request (null when either is unknown).
 */
export function nativeMsPerRequest(counts: NativeCounts, cpuMsPerRequest: number | null): Map<string, number> | null {
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  if (total === 0 || cpuMsPerRequest === null) return null;
  return new Map(NATIVE_ROWS.map((part) => [part, ((counts.get(part) ?? 0) / total) * cpuMsPerRequest]));
}
