// `--rate R`: an open-loop load. Arrivals come on a fixed schedule, R a
// second, whatever the server does: an arrival never waits for an earlier
// answer, so a slow server meets the same load as a fast one and its queue
// shows in the latencies (a closed loop would slow down with it and hide
// them). Each simulated user still has one request in flight at most, so
// every answer can be checked against the exact model: an arrival that finds
// every user busy waits for one, and that wait counts in its latency.

/** The arrival times of a run, in ms from its start: one every 1000/R ms, the same for every side of a comparison. */
export function arrivalTimes(rate: number, seconds: number): number[] {
  const count = Math.floor(rate * seconds);
  return Array.from({ length: count }, (_, i) => (i * 1000) / rate);
}

/** Users with no request in flight; an arrival takes one at random and gives it back when its answer came. */
export class UserPool {
  readonly #free: string[];
  readonly #waiting: ((user: string) => void)[] = [];

  constructor(
    users: readonly string[],
    private readonly random: () => number,
  ) {
    this.#free = [...users];
  }

  /** A free user now, or the first one given back. */
  async take(): Promise<string> {
    if (this.#free.length === 0) return await new Promise<string>((resolve) => this.#waiting.push(resolve));
    const i = Math.floor(this.random() * this.#free.length);
    const user = this.#free[i]!;
    this.#free[i] = this.#free[this.#free.length - 1]!;
    this.#free.pop();
    return user;
  }

  give(user: string): void {
    const next = this.#waiting.shift();
    if (next) next(user);
    else this.#free.push(user);
  }

  get free(): number {
    return this.#free.length;
  }
}

export type Clock = { now(): number; sleepUntil(at: number): Promise<void> };

export const realClock: Clock = {
  now: () => performance.now(),
  sleepUntil: async (at) => {
    const ms = at - performance.now();
    if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
  },
};

export type OpenLoopRun = { arrivals: number; maxLateMs: number };

/**
 * Runs `operation` at each arrival time without waiting for earlier ones,
 * then waits for every answer (a late one is counted, never dropped).
 * `operation` gets the user and how late the request is sent after its
 * arrival time (waiting for a free user, a busy event loop), which the
 * caller adds to the latency it records.
 */
export async function openLoop(
  schedule: readonly number[],
  pool: UserPool,
  operation: (user: string, lateMs: number) => Promise<void>,
  clock: Clock = realClock,
): Promise<OpenLoopRun> {
  const start = clock.now();
  const inFlight: Promise<void>[] = [];
  let maxLateMs = 0;
  for (const at of schedule) {
    await clock.sleepUntil(start + at);
    inFlight.push(
      (async () => {
        const user = await pool.take();
        const lateMs = Math.max(0, clock.now() - (start + at));
        maxLateMs = Math.max(maxLateMs, lateMs);
        try {
          await operation(user, lateMs);
        } finally {
          pool.give(user);
        }
      })(),
    );
  }
  await Promise.all(inFlight);
  return { arrivals: schedule.length, maxLateMs };
}
