import { metrics } from "../../metrics/recorder";
import { ApiError } from "../lib/errors";

/** Why a request was refused: the user's own limit, their address, their device, or a stricter limit their standing selected. */
export type RefusalKind = "user" | "ip" | "device" | "reputation";

/**
 * The platform's limiter counts in fixed windows and does not say when a
 * window ends; the [[ratelimits]] blocks in wrangler.toml all use a 60 s
 * period, so a client that waits that long is sure to find a new window.
 */
export const PLATFORM_LIMIT_PERIOD_SECONDS = 60;

/** A 429 for a refusal of this kind, counted in /metrics. */
export function refused(kind: RefusalKind, message: string, retryAfter: number): ApiError {
  metrics.count("limit_refusals_total", { kind });
  return new ApiError(429, "rate_limited", message, { retryAfter });
}
