import { config } from "../../shared/config";
import type { ToggleLimits } from "../../shared/contracts";
import type { ToggleCounter } from "../../shared/counters";
import type { Limit } from "../../shared/rate-limiter";

/** Likes and saves have separate buckets, each a per-minute and a per-day limit. */
export function toggleLimits(env: Env, counter: ToggleCounter, stricter?: ToggleLimits): Limit[] {
  const [perMinute, perDay] = stricter
    ? [stricter.perMinute, stricter.perDay]
    : counter === "likes"
      ? [config(env).RATE_LIMIT_PER_MINUTE, config(env).RATE_LIMIT_PER_DAY]
      : [config(env).SAVE_RATE_LIMIT_PER_MINUTE, config(env).SAVE_RATE_LIMIT_PER_DAY];
  return [
    { name: `${counter}:minute`, limit: perMinute, periodMs: 60_000 },
    { name: `${counter}:day`, limit: perDay, periodMs: 86_400_000 },
  ];
}
