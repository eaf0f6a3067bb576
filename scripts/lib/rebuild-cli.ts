// The rebuild command's parts that touch the machine: its checkpoint file and its progress line.
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import type { RebuildProgress } from "../../shared/rebuild-run";

/** A checkpoint file, written whole through a rename so a kill never leaves half of one. */
export function jsonCheckpoint(path: string) {
  return {
    load: async (): Promise<RebuildProgress | null> => (existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as RebuildProgress) : null),
    save: async (progress: RebuildProgress): Promise<void> => {
      writeFileSync(`${path}.tmp`, JSON.stringify(progress));
      renameSync(`${path}.tmp`, path);
    },
  };
}

/** One line on stderr, redrawn in place: a bar by the walk's position, what changed, the rate and the time left. */
export function rebuildProgressLine(started: number) {
  let firstProgress: number | null = null;
  return (progress: Readonly<RebuildProgress>): void => {
    firstProgress ??= progress.progress;
    const seconds = (Date.now() - started) / 1_000;
    const gained = progress.progress - firstProgress;
    const eta = gained > 0 && progress.progress < 1 ? (seconds / gained) * (1 - progress.progress) : 0;
    const width = 30;
    const bar = "#".repeat(Math.round(progress.progress * width)).padEnd(width, ".");
    const edges = progress.target === "central" ? `  edges ${progress.edges_written}/${progress.edges_written + progress.edges_unchanged}` : "";
    process.stderr.write(
      `\r[${bar}] ${(progress.progress * 100).toFixed(1)}%  checked ${progress.checked}  written ${progress.written}  repaired ${progress.repaired}${edges}  failed ${progress.failed}  ${(progress.checked / Math.max(seconds, 0.001)).toFixed(0)}/s  ETA ${eta.toFixed(0)}s `,
    );
  };
}
