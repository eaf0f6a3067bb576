import type { ImportOutcome } from "./contracts";
import { MAX_IMPORT_BATCH, parseLine, type ImportEdge } from "./import";
import { Backpressure, FlowControl } from "./import-flow";

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
  /**
   * Sends one batch to the service endpoint and answers its outcomes, in
   * order; throws `Backpressure` when the server asks to slow down (the batch
   * is then sent again), anything else to end the run.
   */
  send: (edges: ImportEdge[]) => Promise<ImportOutcome[]>;
  checkpoint: { load: () => Promise<ImportProgress | null>; save: (progress: ImportProgress) => Promise<void> };
  batchSize?: number;
  /** Most batches in flight at once (default 1); the flow control keeps fewer while the server pushes back. */
  parallel?: number;
  /** Waits as long as the rate control asks before a batch of this many edges is sent. */
  pace?: (edges: number) => Promise<void>;
  onProgress?: (progress: Readonly<ImportProgress>, flow: { window: number; refused: number }) => void;
};

export const emptyProgress = (): ImportProgress => ({ line: 0, read: 0, applied: 0, duplicates: 0, superseded: 0, refused: 0, refusals: [] });

/** A stretch of the file: its edges in flight, and what its other lines came to. */
type Batch = {
  upTo: number;
  read: number;
  edges: ImportEdge[];
  lines: number[];
  refusals: { line: number; reason: string }[];
  outcomes?: ImportOutcome[];
};

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Reads an import file line by line, refuses (and lists) the lines that hold
 * no valid edge, sends the others in batches, up to `parallel` at once as the
 * flow control allows, and keeps a checkpoint over the batches acknowledged
 * in file order: a line is in the checkpoint only when it and every line
 * before it were handled, so a kill at any moment resumes without a gap. A
 * CSV file's first line is its header.
 */
export async function runImport(run: ImportRun): Promise<ImportProgress> {
  const batchSize = Math.min(run.batchSize ?? MAX_IMPORT_BATCH, MAX_IMPORT_BATCH);
  const progress = (await run.checkpoint.load()) ?? emptyProgress();
  const flow = new FlowControl({ maxInFlight: run.parallel ?? 1 });
  let backpressured = 0;
  const pending: Batch[] = [];
  const inFlight = new Set<Promise<void>>();
  const stop: { failure: { error: unknown } | null } = { failure: null };
  let header: string[] | undefined;
  let number = 0;

  const refuse = (line: number, reason: string) => {
    progress.refused++;
    if (progress.refusals.length < MAX_LISTED_REFUSALS) progress.refusals.push({ line, reason });
  };
  // Folds the acknowledged batches at the head of the file into the progress, then saves it once.
  let saving = Promise.resolve();
  const settle = () => {
    let moved = false;
    while (pending[0] && (pending[0].outcomes || pending[0].edges.length === 0)) {
      const batch = pending.shift()!;
      const outcomes = batch.outcomes ?? [];
      progress.read += batch.read;
      const refusals = [
        ...batch.refusals,
        ...outcomes.flatMap((o, i) => (o === "barred" ? [{ line: batch.lines[i]!, reason: "the user was purged or deleted: barred from liking" }] : [])),
      ].sort((a, b) => a.line - b.line);
      for (const { line, reason } of refusals) refuse(line, reason);
      progress.applied += outcomes.filter((o) => o === "applied").length;
      progress.duplicates += outcomes.filter((o) => o === "duplicate").length;
      progress.superseded += outcomes.filter((o) => o === "superseded").length;
      progress.line = Math.max(progress.line, batch.upTo);
      moved = true;
    }
    if (!moved) return saving;
    const snapshot = structuredClone(progress);
    saving = saving.then(async () => {
      await run.checkpoint.save(snapshot);
      run.onProgress?.(snapshot, { window: flow.window, refused: backpressured });
    });
    return saving;
  };
  const deliver = async (batch: Batch) => {
    for (;;) {
      if (stop.failure) return;
      if (flow.waitMs > 0) {
        await sleep(flow.waitMs);
        continue;
      }
      try {
        batch.outcomes = await run.send(batch.edges);
        flow.acknowledged();
        return;
      } catch (error) {
        if (!(error instanceof Backpressure)) throw error;
        backpressured++;
        flow.refused(error);
      }
    }
  };
  const dispatch = async (batch: Batch) => {
    pending.push(batch);
    if (batch.edges.length === 0) return;
    while (inFlight.size >= flow.window && !stop.failure) await Promise.race(inFlight);
    if (stop.failure) return;
    await run.pace?.(batch.edges.length);
    const sending: Promise<void> = deliver(batch)
      .then(settle)
      .catch((error: unknown) => void (stop.failure ??= { error }))
      .finally(() => inFlight.delete(sending));
    inFlight.add(sending);
  };

  let batch: Batch = { upTo: progress.line, read: 0, edges: [], lines: [], refusals: [] };
  for await (const raw of run.lines) {
    if (stop.failure) break;
    number++;
    const line = raw.trim();
    if (run.format === "csv" && number === 1) {
      header = line.split(",").map((name) => name.trim());
      continue;
    }
    if (number <= progress.line || line === "") continue;
    batch.read++;
    batch.upTo = number;
    const parsed = parseLine(line, run.format, header);
    if ("edge" in parsed) {
      batch.edges.push(parsed.edge);
      batch.lines.push(number);
    } else {
      batch.refusals.push({ line: number, reason: parsed.refused });
    }
    if (batch.edges.length >= batchSize) {
      await dispatch(batch);
      batch = { upTo: number, read: 0, edges: [], lines: [], refusals: [] };
    }
  }
  if (!stop.failure) {
    batch.upTo = Math.max(number, progress.line);
    await dispatch(batch);
  }
  while (inFlight.size > 0) await Promise.race(inFlight);
  if (stop.failure) {
    await saving;
    throw stop.failure.error;
  }
  await settle();
  return progress;
}
