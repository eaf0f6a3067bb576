import type { RebuildResponse, RebuildTarget } from "./rebuild";

/** Most failed keys a report lists one by one; past it they are only counted. */
export const MAX_LISTED_FAILURES = 1_000;

/**
 * A rebuild's progress and report, saved after every step the service
 * answered: `cursor` is where the next step starts, so a run killed at any
 * point resumes there, at worst repeating one step (which changes nothing
 * the second time).
 */
export type RebuildProgress = Omit<RebuildResponse, "next" | "failed"> & {
  cursor: string | null;
  finished: boolean;
  steps: number;
  failed: number;
  failures: RebuildResponse["failed"];
};

export type RebuildRun = {
  target: RebuildTarget;
  /** Keys per step. */
  limit?: number;
  /** One step: POST /v1/admin/rebuild. */
  send: (request: { target: RebuildTarget; cursor: string | null; limit?: number }) => Promise<RebuildResponse>;
  checkpoint: { load: () => Promise<RebuildProgress | null>; save: (progress: RebuildProgress) => Promise<void> };
  /** Waits as long as the rate control asks after a step that visited this many keys. */
  pace?: (keys: number) => Promise<void>;
  onProgress?: (progress: Readonly<RebuildProgress>) => void;
};

export const emptyRebuild = (target: RebuildTarget): RebuildProgress => ({
  target,
  cursor: null,
  finished: false,
  steps: 0,
  progress: 0,
  checked: 0,
  written: 0,
  unchanged: 0,
  repaired: 0,
  edges_written: 0,
  edges_unchanged: 0,
  failed: 0,
  failures: [],
});

/**
 * Steps through a rebuild until the service says it is complete, keeping a
 * checkpoint after each step. An unfinished checkpoint of the same target is
 * resumed; a finished one (or another target's) starts a new rebuild.
 */
export async function runRebuild(run: RebuildRun): Promise<RebuildProgress> {
  const saved = await run.checkpoint.load();
  const progress = saved && !saved.finished && saved.target === run.target ? saved : emptyRebuild(run.target);
  while (!progress.finished) {
    const step = await run.send({ target: run.target, cursor: progress.cursor, ...(run.limit ? { limit: run.limit } : {}) });
    progress.steps++;
    progress.checked += step.checked;
    progress.written += step.written;
    progress.unchanged += step.unchanged;
    progress.repaired += step.repaired;
    progress.edges_written += step.edges_written;
    progress.edges_unchanged += step.edges_unchanged;
    progress.failed += step.failed.length;
    progress.failures.push(...step.failed.slice(0, Math.max(0, MAX_LISTED_FAILURES - progress.failures.length)));
    progress.cursor = step.next;
    progress.progress = step.progress;
    progress.finished = step.next === null;
    await run.checkpoint.save(progress);
    run.onProgress?.(progress);
    if (!progress.finished) await run.pace?.(step.checked);
  }
  return progress;
}
