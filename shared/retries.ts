/**
 * The one place that decides what is retried and how long to wait.
 * Only errors the platform marks `retryable` and not `overloaded` are retried:
 * retrying an overloaded object makes the overload worse.
 */
export function isRetryable(error: unknown): boolean {
  const e = error as { retryable?: unknown; overloaded?: unknown } | null;
  return !!e && e.retryable === true && e.overloaded !== true;
}

/** Full-jitter exponential backoff: a random wait in [0, min(cap, base * 2^attempt)). */
export function backoffMs(attempt: number, baseMs: number, capMs: number): number {
  return Math.random() * Math.min(capMs, baseMs * 2 ** attempt);
}

export async function withRetries<T>(fn: () => Promise<T>, attempts = 3, baseMs = 20, capMs = 200): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (attempt + 1 >= attempts || !isRetryable(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, backoffMs(attempt, baseMs, capMs)));
    }
  }
}
