// One `perf record` of a server's processes over a phase, from its start to
// the text `perf script` makes of it: what `--native`'s CPU sampler
// (lib/native.ts) and its flush trace (lib/flushes.ts) each run.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** How long a recording waits for perf to attach before the phase starts anyway. */
const ATTACH_WAIT_MS = 5_000;

/** A frame line of `perf script` ("\t    55cfb61a9953 symbol (args)"): the symbol, the address dropped. */
export function perfFrame(line: string): string {
  const frame = line.trim().replace(/^[0-9a-f]+\s*/, "");
  return frame === "" ? "[unknown]" : frame;
}

export class PerfRecord {
  readonly #dir = mkdtempSync(join(tmpdir(), "plaudit-perf-"));
  readonly #perf: ChildProcess;
  readonly #exited: Promise<{ code: number | null; error?: Error }>;
  #stderr = "";
  /** perf could not be started at all (the spawn's error event). */
  #failed = false;

  /** `what` names the recording in errors; `events` are perf record's event and process options. */
  private constructor(
    private readonly what: string,
    events: readonly string[],
  ) {
    // Stamped on the monotonic clock, the one the bench's own request times are read from.
    this.#perf = spawn("perf", ["record", "-q", "-k", "monotonic", ...events, "-o", this.#data], { stdio: ["ignore", "ignore", "pipe"] });
    this.#perf.stderr?.on("data", (chunk: Buffer) => (this.#stderr += chunk.toString()));
    this.#exited = new Promise((resolve) => {
      this.#perf.once("error", (error) => {
        this.#failed = true;
        resolve({ code: null, error });
      });
      this.#perf.once("exit", (code) => resolve({ code }));
    });
  }

  get #data(): string {
    return join(this.#dir, "perf.data");
  }

  /** Bytes perf has written so far (0 before it opened its file). */
  #written(): number {
    try {
      return statSync(this.#data).size;
    } catch {
      return 0;
    }
  }

  #ended(): boolean {
    return this.#failed || this.#perf.exitCode !== null;
  }

  /**
   * Starts recording. perf creates its file empty, opens its events on the
   * processes, then writes the file's header: a header says it is recording.
   */
  static async start(what: string, events: readonly string[]): Promise<PerfRecord> {
    const record = new PerfRecord(what, events);
    const deadline = Date.now() + ATTACH_WAIT_MS;
    while (record.#written() === 0 && Date.now() < deadline && !record.#ended()) await new Promise((r) => setTimeout(r, 50));
    if (record.#ended()) {
      const why = `--native: perf record of ${what} ended before the phase (exit ${record.#perf.exitCode}): ${record.#stderr.trim()}`;
      await record.stop("pid").catch(() => undefined);
      throw new Error(why);
    }
    return record;
  }

  /** Ends the recording and returns `perf script -F fields` of it. */
  async stop(fields: string): Promise<string> {
    try {
      this.#perf.kill("SIGINT");
      const { code, error } = await this.#exited;
      // Interrupted, as asked, perf record ends by the signal or with 0 or 130 (128 + SIGINT); anything else means it recorded nothing usable.
      if (error || (code !== 0 && code !== null && code !== 130)) throw new Error(`--native: perf record of ${this.what} failed (${error?.message ?? `exit ${code}`}): ${this.#stderr.trim()}`);
      // A lost event is a sample missing, or a flush's entry paired with a later flush's exit: one long false flush.
      if (/lost/i.test(this.#stderr)) console.error(`--native: perf lost events while recording ${this.what}; its figures may be off: ${this.#stderr.trim()}`);
      const script = spawnSync("perf", ["script", "-i", this.#data, "-F", fields], { encoding: "utf8", maxBuffer: 1 << 30 });
      if (script.error || script.status !== 0) throw new Error(`--native: perf script of ${this.what} failed (${script.error?.message ?? `exit ${script.status}`}): ${script.stderr?.trim()}`);
      return script.stdout;
    } finally {
      rmSync(this.#dir, { recursive: true, force: true });
    }
  }
}
