// The import command's parts that touch the machine: the file, the
// checkpoint file, the service endpoint with its retries, the pace and the
// progress bar. The import's logic is shared/import-run.ts.
import { createReadStream, existsSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import type { ImportOutcome } from "../../shared/contracts";
import type { ImportEdge } from "../../shared/import";
import type { ImportProgress } from "../../shared/import-run";
import { postService } from "./service-call";

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

/** POSTs one batch (with the service call's retries); anything but a 2xx after them ends the run. */
export function batchSender(url: string, token: string) {
  return async (edges: ImportEdge[]): Promise<ImportOutcome[]> =>
    (await postService<{ results: ImportOutcome[] }>(url, "/v1/admin/import", token, { edges })).results;
}

/**
 * Holds the import to `perSecond` edges a second on average, so the objects
 * and the pipeline keep room for live traffic; 0 means as fast as answers come.
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

/** One line on stderr, redrawn in place: a bar by bytes, lines, rate and time left. */
export function progressBar(size: number, bytesRead: { value: number }, startLine: number) {
  const started = Date.now();
  return (progress: Readonly<ImportProgress>): void => {
    const done = size > 0 ? Math.min(1, bytesRead.value / size) : 1;
    const seconds = (Date.now() - started) / 1_000;
    const rate = seconds > 0 ? (progress.line - startLine) / seconds : 0;
    const eta = done > 0 && done < 1 ? (seconds / done) * (1 - done) : 0;
    const width = 30;
    const bar = "#".repeat(Math.round(done * width)).padEnd(width, ".");
    process.stderr.write(
      `\r[${bar}] ${(done * 100).toFixed(1)}%  line ${progress.line}  applied ${progress.applied}  dup ${progress.duplicates + progress.superseded}  refused ${progress.refused}  ${rate.toFixed(0)} lines/s  ETA ${eta.toFixed(0)}s `,
    );
  };
}

export function fileSize(path: string): number {
  return statSync(path).size;
}
