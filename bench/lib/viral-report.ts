// The viral scenario's figures (bench/scenarios/viral.ts): what the head's
// counters said over the run, and the tables printed from them.
import type { FigureCell, FigureColumn } from "./figures";
import type { QueueResult } from "./queue-sim";

/** The head's counters at `t` ms into the ramp. */
export type HeadSample = { t: number; hot: boolean; applied: number; likes: number };

export type StepResult = { likers: number; likes: number; perSecond: number; p50: number; p99: number; errors: number };

export type ModeResult = {
  mode: string;
  stepResults: StepResult[];
  /** Likes answered "liked"; `unknown`: likes whose answer was lost (they may or may not have landed). */
  liked: number;
  unknown: number;
  exact: boolean;
  samples: HeadSample[];
  /** Writes the head applied in each second of the ramp. */
  headPerSecond: number[];
  simulated: QueueResult;
};

/** The first sample that saw the item split: when, and what the head had applied by then. */
export function splitAt(samples: readonly HeadSample[]): HeadSample | null {
  return samples.find((s) => s.hot) ?? null;
}

/**
 * Writes the head applied in each whole second of the ramp, from its sampled
 * cumulative counter, taken as linear between samples: a sample that came
 * late (the admin read queued behind the load) spreads its writes over the
 * time since the previous one instead of piling them into one second.
 */
export function headWritesPerSecond(samples: readonly HeadSample[]): number[] {
  const sorted = [...samples].sort((a, b) => a.t - b.t);
  const end = Math.ceil(Math.max(0, ...sorted.map((s) => s.t)) / 1000);
  const appliedAt = (ms: number): number => {
    const after = sorted.findIndex((s) => s.t >= ms);
    if (after < 0) return sorted.at(-1)?.applied ?? 0;
    const b = sorted[after]!;
    const a = sorted[after - 1];
    if (!a || b.t === a.t) return b.applied;
    return a.applied + ((b.applied - a.applied) * (ms - a.t)) / (b.t - a.t);
  };
  return Array.from({ length: end }, (_, second) => Math.round(appliedAt((second + 1) * 1000) - appliedAt(second * 1000)));
}

/** The figure table of a viral run (`--figure`): one row per mode, as the first printed table. */
export const VIRAL_COLUMNS: FigureColumn[] = [
  { name: "mode", align: "left" },
  { name: "split at", align: "left" },
  { name: "head applied before split", align: "right" },
  { name: "head applied after", align: "right" },
  { name: "likes", align: "right" },
  { name: "head peak writes/s", align: "right" },
  { name: "one object's peak queueing, s", align: "right", decimals: 2 },
  { name: "count", align: "left" },
];

export function viralRow(r: ModeResult): FigureCell[] {
  const split = splitAt(r.samples);
  const total = r.samples.at(-1)?.applied ?? 0;
  const before = split ? split.applied : total;
  return [r.mode, splitWhen(split), before, total - before, r.liked, r.simulated.peakLoad, r.simulated.peakDelaySeconds, r.exact ? "exact" : "WRONG"];
}

/** The second figure of a viral run (`--figure NAME` writes it as NAME-steps): like p50 / p99 per step, as printed. */
export function viralStepsFigure(results: readonly ModeResult[]): { columns: FigureColumn[]; rows: FigureCell[][] } {
  const likers = results[0]?.stepResults.map((st) => st.likers) ?? [];
  return {
    columns: [{ name: "run (likers →; like p50 / p99 ms)", align: "left" }, ...likers.map((n): FigureColumn => ({ name: String(n), align: "right" }))],
    rows: results.map((r) => [r.mode, ...r.stepResults.map((st) => `${Math.round(st.p50).toLocaleString("en-US")} / ${Math.round(st.p99).toLocaleString("en-US")}`)]),
  };
}

function splitWhen(split: HeadSample | null): string {
  return !split ? "never" : split.t <= 0 ? "before the ramp" : `${(split.t / 1000).toFixed(2)} s`;
}

type Scaling = { scale: number; capacity: number; objectCapacity: number; settings: Record<string, string> };

export function printViral(results: readonly ModeResult[], scaling: Scaling): void {
  const s = scaling.settings;
  console.log(
    `viral ramp: hot past ${s.HOT_WRITES_PER_SEC} writes/s over ${s.HOT_WINDOW_SECONDS} s, N = ${s.HOT_SHARDS}, forecast over ${s.HOT_PREDICT_SECONDS} s (predicted run)`,
  );
  console.log("\nmode       split at      head applied before / after / all likes   head peak writes/s   simulated peak delay   count");
  for (const r of results) {
    const split = splitAt(r.samples);
    const total = r.samples.at(-1)?.applied ?? 0;
    const before = split ? split.applied : total;
    const when = splitWhen(split);
    console.log(
      `${r.mode.padEnd(10)} ${when.padEnd(13)} ${`${before} / ${total - before} / ${r.liked}`.padEnd(42)} ` +
        `${String(r.simulated.peakLoad).padEnd(20)} ${`${r.simulated.peakDelaySeconds.toFixed(2)} s`.padEnd(22)} ${r.exact ? "exact" : "WRONG"}`,
    );
  }
  console.log("\nlike latency per step (likers: likes/s, p50 / p99 ms)");
  for (const r of results) {
    const steps = r.stepResults.map((st) => `${st.likers}: ${st.perSecond.toFixed(0)}/s ${st.p50.toFixed(0)}/${st.p99.toFixed(0)}`);
    console.log(`${r.mode.padEnd(10)} ${steps.join(" | ")}`);
  }
  console.log(
    `\nsimulated: a trace-driven simulation of one FIFO object serving ${scaling.capacity} writes/s ` +
      `(${scaling.objectCapacity}/s, the documented upper figure for writing requests, scaled by ${scaling.scale} like the thresholds), ` +
      "fed each second's writes the head applied in the run; writes arrive evenly within a second, nothing times out, is retried or dropped.",
  );
}
