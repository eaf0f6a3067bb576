/**
 * Per-user limits as token buckets kept in GCRA form: one number per limit,
 * the "theoretical arrival time". A bucket of `limit` tokens refills evenly
 * over `periodMs`, so `limit` requests may come at once and then one every
 * periodMs/limit. A refused request changes nothing (it does not count).
 */
export type Limit = { name: string; limit: number; periodMs: number };

export type LimitDecision =
  | { allowed: true; next: Map<string, number> }
  | { allowed: false; retryAfterSeconds: number };

export function decide(limits: readonly Limit[], tats: ReadonlyMap<string, number>, now: number): LimitDecision {
  const next = new Map<string, number>();
  let waitMs = 0;
  for (const { name, limit, periodMs } of limits) {
    if (limit <= 0) continue;
    const interval = periodMs / limit;
    const tat = Math.max(tats.get(name) ?? 0, now) + interval;
    if (tat - now > periodMs) waitMs = Math.max(waitMs, tat - periodMs - now);
    next.set(name, tat);
  }
  if (waitMs > 0) return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
  return { allowed: true, next };
}
