/**
 * The one place that decides what is retried and how long to wait.
 * Errors the platform marks `retryable`, or `durableObjectReset` (the object
 * restarted under new code, as on every deploy: a fresh stub reaches the new
 * instance), and not `overloaded`, are retried: retrying an overloaded object
 * makes the overload worse. Every object method is idempotent, so a call
 * that may have run once already is safe to repeat.
 */
export function isRetryable(error: unknown): boolean {
  const e = error as { retryable?: unknown; overloaded?: unknown; durableObjectReset?: unknown } | null;
  return !!e && (e.retryable === true || e.durableObjectReset === true) && e.overloaded !== true;
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
