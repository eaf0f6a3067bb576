// The import command's parts that touch the machine: the file, the
// checkpoint file, the service endpoint with its retries, the pace and the
// progress bar. The import's logic is shared/import-run.ts.
import { createReadStream, existsSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import type { ImportOutcome } from "../../shared/contracts";
import type { ImportEdge } from "../../shared/import";
import { Backpressure } from "../../shared/import-flow";
import type { ImportProgress } from "../../shared/import-run";

/** Every line of the file, counting the bytes read for the progress bar. */
export async function* fileLines(path: string, bytesRead: { value: number }): AsyncGenerator<string> {
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  for await (const line of lines) {
    bytesRead.value += Buffer.byteLength(line) + 1;
    yield line;
  }
}

/** The checkpoint beside the file, written whole through a rename so a kill never leaves half of one. */
export function fileCheckpoint(path: string, source: { file: string; size: number }) {
  return {
    load: async (): Promise<ImportProgress | null> => {
      if (!existsSync(path)) return null;
      const saved = JSON.parse(readFileSync(path, "utf8")) as { source: typeof source; progress: ImportProgress };
      if (saved.source.file !== source.file || saved.source.size !== source.size) {
        throw new Error(`${path} belongs to another file (or this one changed); delete it to start over`);
      }
      return saved.progress;
    },
    save: async (progress: ImportProgress): Promise<void> => {
      writeFileSync(`${path}.tmp`, JSON.stringify({ source, progress }));
      renameSync(`${path}.tmp`, path);
    },
  };
}

/**
 * POSTs one batch. A 503 or 429 (the server's backpressure: its queues are
 * full, an object failed) or no answer at all is `Backpressure`, with the
 * server's Retry-After when it gave one, and the batch is sent again; any
 * other refusal ends the run with the service's message.
 */
export function batchSender(url: string, token: string) {
  return async (edges: ImportEdge[]): Promise<ImportOutcome[]> => {
    let response: Response;
    try {
      response = await fetch(`${url}/v1/admin/import`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ edges }),
      });
    } catch (error) {
      throw new Backpressure(null, `no answer: ${String(error)}`);
    }
    if (response.ok) return ((await response.json()) as { results: ImportOutcome[] }).results;
    const text = await response.text();
    if (response.status === 503 || response.status === 429) {
      const seconds = Number(response.headers.get("retry-after"));
      throw new Backpressure(Number.isFinite(seconds) && seconds > 0 ? seconds * 1_000 : null, `${response.status} ${text}`);
    }
    throw new Error(`the service refused the call: ${response.status} ${text}`);
  };
}

/**
 * Holds the import to at most `perSecond` edges a second on average, so a
 * deployment keeps room for live traffic; the server's backpressure slows it
 * further whenever it cannot take that. 0 means as fast as the server takes.
 */
export function pacer(perSecond: number) {
  const started = Date.now();
  let sent = 0;
  return async (edges: number): Promise<void> => {
    sent += edges;
    if (perSecond <= 0) return;
    const due = started + (sent / perSecond) * 1_000 - Date.now();
    if (due > 0) await new Promise((resolve) => setTimeout(resolve, due));
  };
}

/**
 * One line on stderr, redrawn in place: a bar by bytes read, the edges a
 * second over the last 10 seconds and since the start, the time left at the
 * recent rate, and the flow control's window and refusals.
 */
export function progressBar(size: number, bytesRead: { value: number }, startLine: number) {
  const started = Date.now();
  const recent: { at: number; line: number }[] = [{ at: started, line: startLine }];
  return (progress: Readonly<ImportProgress>, flow?: { window: number; refused: number }): void => {
    const now = Date.now();
    recent.push({ at: now, line: progress.line });
    // The rate is taken from the newest point at least 10 s old: two answers a moment apart say nothing.
    while (recent.length > 2 && recent[1]!.at <= now - 10_000) recent.shift();
    const oldest = recent[0]!;
    const rate = now > oldest.at ? ((progress.line - oldest.line) * 1_000) / (now - oldest.at) : 0;
    const overall = now > started ? ((progress.line - startLine) * 1_000) / (now - started) : 0;
    const done = size > 0 ? Math.min(1, bytesRead.value / size) : 1;
    const linesLeft = done > 0 ? (progress.line / done) * (1 - done) : 0;
    const eta = rate > 0 ? linesLeft / rate : 0;
    const width = 30;
    const bar = "#".repeat(Math.round(done * width)).padEnd(width, ".");
    const flowText = flow ? `  in flight ${flow.window}  slowed ${flow.refused}` : "";
    process.stderr.write(
      `\r[${bar}] ${(done * 100).toFixed(1)}%  line ${progress.line}  applied ${progress.applied}  dup ${progress.duplicates + progress.superseded}  refused ${progress.refused}  ${rate.toFixed(0)} edges/s (${overall.toFixed(0)} overall)  left ${clock(eta)}${flowText} `,
    );
  };
}

/** Seconds as h:mm:ss. */
function clock(seconds: number): string {
  const s = Math.round(seconds);
  return `${Math.floor(s / 3600)}:${String(Math.floor(s / 60) % 60).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`;
}

export function fileSize(path: string): number {
  return statSync(path).size;
}
