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
