import type { ImportOutcome } from "./contracts";
import { MAX_IMPORT_BATCH, parseLine, type ImportEdge } from "./import";

/** Most refused lines a report lists one by one; past it they are only counted. */
export const MAX_LISTED_REFUSALS = 1_000;

/**
 * An import's progress and report. Saved after every batch the service
 * acknowledged: `line` is the last line of the file fully handled, so a run
 * killed at any point resumes after it, at worst sending one batch again
 * (whose edges then answer `duplicate`: importing is idempotent).
 */
export type ImportProgress = Record<"line" | "read" | "applied" | "duplicates" | "superseded" | "refused", number> & {
  refusals: { line: number; reason: string }[];
};

export type ImportRun = {
  /** Every line of the file, from its first. */
  lines: AsyncIterable<string>;
  format: "ndjson" | "csv";
  /** Sends one batch to the service endpoint and answers its outcomes, in order. */
  send: (edges: ImportEdge[]) => Promise<ImportOutcome[]>;
  checkpoint: { load: () => Promise<ImportProgress | null>; save: (progress: ImportProgress) => Promise<void> };
  batchSize?: number;
  /** Waits as long as the rate control asks before a batch of this many edges is sent. */
  pace?: (edges: number) => Promise<void>;
  onProgress?: (progress: Readonly<ImportProgress>) => void;
};

export const emptyProgress = (): ImportProgress => ({ line: 0, read: 0, applied: 0, duplicates: 0, superseded: 0, refused: 0, refusals: [] });

/**
 * Reads an import file line by line, refuses (and lists) the lines that hold
 * no valid edge, sends the others in batches and keeps a checkpoint after
 * each. A CSV file's first line is its header.
 */
export async function runImport(run: ImportRun): Promise<ImportProgress> {
  const batchSize = Math.min(run.batchSize ?? MAX_IMPORT_BATCH, MAX_IMPORT_BATCH);
  const progress = (await run.checkpoint.load()) ?? emptyProgress();
  let header: string[] | undefined;
  let batch: ImportEdge[] = [];
  let batchLines: number[] = [];
  let number = 0;
  const refuse = (line: number, reason: string) => {
    progress.refused++;
    if (progress.refusals.length < MAX_LISTED_REFUSALS) progress.refusals.push({ line, reason });
  };
  const flush = async (upTo: number) => {
    if (batch.length > 0) {
      await run.pace?.(batch.length);
      const outcomes = await run.send(batch);
      progress.applied += outcomes.filter((o) => o === "applied").length;
      progress.duplicates += outcomes.filter((o) => o === "duplicate").length;
      progress.superseded += outcomes.filter((o) => o === "superseded").length;
      outcomes.forEach((o, i) => o === "barred" && refuse(batchLines[i]!, "the user was purged or deleted: barred from liking"));
      batch = [];
      batchLines = [];
    }
    progress.line = upTo;
    await run.checkpoint.save(progress);
    run.onProgress?.(progress);
  };
  for await (const raw of run.lines) {
    number++;
    const line = raw.trim();
    if (run.format === "csv" && number === 1) {
      header = line.split(",").map((name) => name.trim());
      continue;
    }
    if (number <= progress.line || line === "") continue;
    progress.read++;
    const parsed = parseLine(line, run.format, header);
    if ("edge" in parsed) {
      batch.push(parsed.edge);
      batchLines.push(number);
    } else {
      refuse(number, parsed.refused);
    }
    if (batch.length >= batchSize) await flush(number);
  }
  await flush(Math.max(number, progress.line));
  return progress;
}
