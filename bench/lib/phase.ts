// The timed phase of a run: one loop per connection, each owning its own
// users, picking operations from the scenario's mix until the clock runs out;
// or, with --rate, arrivals on a fixed schedule (lib/schedule.ts).
import { Recorder, type Outcome } from "./recorder";
import { arrivalTimes, openLoop, UserPool } from "./schedule";
import type { Operation, RunContext } from "../scenarios/operations";
import { pick, type Scenario } from "../scenarios/index";

/** One loop per connection, each owning its own users, so a user never has two requests in flight. */
export async function runWorkers(
  ctx: RunContext,
  users: readonly string[],
  connections: number,
  next: (worker: number) => ((ctx: RunContext, user: string) => Promise<void>) | null,
): Promise<void> {
  await Promise.all(
    Array.from({ length: connections }, async (_, w) => {
      const mine = users.filter((_, i) => i % connections === w);
      for (let step = next(w); step; step = next(w)) {
        await step(ctx, mine[Math.floor(ctx.random() * mine.length)]!);
      }
    }),
  );
}

function progress(recorder: Recorder, seconds: number): () => void {
  if (!process.stderr.isTTY) return () => {};
  const timer = setInterval(() => {
    const elapsed = Math.floor((performance.now() - recorder.startedAt) / 1000);
    const { ops, p99 } = recorder.lastSecond();
    process.stderr.write(
      `\r[${elapsed}/${seconds}s] ${ops} ops/s  p99 ${p99.toFixed(1)} ms  errors ${recorder.errorCount()}  wrong ${recorder.violationCount}   `,
    );
  }, 1000);
  return () => {
    clearInterval(timer);
    process.stderr.write("\n");
  };
}

/** A recorder that adds how late a request was sent after its arrival time to each latency it records. */
function lateBy(recorder: Recorder, lateMs: number): Recorder {
  return new Proxy(recorder, {
    get(target, property) {
      if (property === "record") return (op: string, ms: number, ...rest: [Outcome, string?]) => target.record(op, ms + lateMs, ...rest);
      const value: unknown = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * Runs the scenario's mix for `seconds` on a fresh recorder; returns it and
 * the phase's real length. Closed loop (each connection sends its next
 * request once the last is answered), or with `rate` open loop (lib/schedule.ts).
 */
export async function timedPhase(
  ctx: RunContext,
  users: readonly string[],
  scenario: Scenario,
  options: { seconds: number; connections: number; rate?: number | null },
) {
  const recorder = (ctx.recorder = new Recorder());
  const deadline = performance.now() + options.seconds * 1000;
  const stopProgress = progress(recorder, options.seconds);
  if (options.rate) {
    await openLoop(arrivalTimes(options.rate, options.seconds), new UserPool(users, ctx.random), async (user, lateMs) => {
      const op: Operation = pick(scenario.mix, ctx.random);
      await op.run({ ...ctx, recorder: lateBy(recorder, lateMs) }, user);
    });
  } else {
    await runWorkers(ctx, users, options.connections, () => {
      if (performance.now() >= deadline) return null;
      const op: Operation = pick(scenario.mix, ctx.random);
      return (c, user) => op.run(c, user);
    });
  }
  stopProgress();
  return { recorder, seconds: Math.max(options.seconds, (performance.now() - recorder.startedAt) / 1000) };
}
