/** Statuses worth a retry: the API said "not now", not "no". */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/**
 * Seconds to wait from a Retry-After header (delta-seconds or an HTTP date),
 * else from the body's `retry_after`; undefined when the answer gave neither.
 */
export function retryAfterSeconds(header: string | null, bodyValue: unknown, now = Date.now()): number | undefined {
  if (header !== null && header.trim() !== "") {
    const trimmed = header.trim();
    if (/^\d+$/.test(trimmed)) return Number(trimmed);
    const date = Date.parse(trimmed);
    if (!Number.isNaN(date)) return Math.max(0, Math.ceil((date - now) / 1000));
  }
  return typeof bodyValue === "number" && Number.isFinite(bodyValue) && bodyValue >= 0 ? bodyValue : undefined;
}

/** Full-jitter exponential backoff for a retryable answer that named no wait. */
export function backoffMs(attempt: number, baseMs = 100, capMs = 2_000): number {
  return Math.random() * Math.min(capMs, baseMs * 2 ** attempt);
}

/** A wait that ends early, rejecting, when the call is aborted. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
