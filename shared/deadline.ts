/** A dependency that did not answer in time. Retryable: every call given a deadline here is idempotent. */
export class DeadlineExceeded extends Error {
  readonly retryable = true;
  constructor(readonly what: string, readonly ms: number) {
    super(`${what} did not answer within ${ms} ms`);
    this.name = "DeadlineExceeded";
  }
}

/**
 * Settles with `work`, or rejects with DeadlineExceeded after `ms`: a store
 * that accepts a connection and never answers must not hold a queue consumer
 * or a request forever. The work itself is not cancelled (the platform gives
 * no way to), so only idempotent calls get a deadline.
 */
export async function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Work that fails after its deadline passed has no one left to tell: not an unhandled rejection.
  work.catch(() => undefined);
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new DeadlineExceeded(what, ms)), ms);
      }),
    ]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

type Waiting = { due: number; fail: () => void };

/**
 * Deadlines for the calls one Durable Object makes, on as few timers as
 * possible. A timer set and cleared again on every call was a measurable
 * share of a like's CPU (clearing costs the runtime about three times what
 * setting does, docs/benchmarks.md), so a clock arms a timer for its
 * earliest deadline and never clears one: when it fires, it fails the calls
 * past theirs and arms again for the next, or stops when none is waiting. A
 * later call with an earlier deadline than every armed timer arms one more.
 * A call that answered in time only leaves the set. One clock per object:
 * an object's requests share its context, so its timer may fail a call
 * another of its requests made; a stateless Worker request uses
 * `withDeadline`.
 */
export class DeadlineClock {
  readonly #waiting = new Set<Waiting>();
  /** When each armed timer fires. */
  readonly #armed = new Set<number>();

  /** `withDeadline`, on this clock. */
  async within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
    work.catch(() => undefined);
    let waiting!: Waiting;
    const expired = new Promise<never>((_, reject) => {
      waiting = { due: Date.now() + ms, fail: () => reject(new DeadlineExceeded(what, ms)) };
    });
    this.#waiting.add(waiting);
    this.#arm(waiting.due);
    try {
      return await Promise.race([work, expired]);
    } finally {
      this.#waiting.delete(waiting);
    }
  }

  #arm(due: number): void {
    for (const at of this.#armed) if (at <= due) return;
    this.#armed.add(due);
    setTimeout(() => this.#fire(due), Math.max(0, due - Date.now()));
  }

  #fire(at: number): void {
    this.#armed.delete(at);
    const now = Date.now();
    let next = Infinity;
    for (const waiting of this.#waiting) {
      if (waiting.due <= now) {
        this.#waiting.delete(waiting);
        waiting.fail();
      } else next = Math.min(next, waiting.due);
    }
    if (next !== Infinity) this.#arm(next);
  }
}
