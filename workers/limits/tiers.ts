import type { ToggleLimits } from "../../shared/contracts";
import type { ToggleCounter } from "../../shared/counters";
import type { Config } from "../../shared/config";
import type { LimitsView } from "../../shared/schemas";

// The per-user limits of each standing tier, from the configuration alone
// (the OpenAPI document's example is built from them too).

/** The standard per-user limits of a toggle counter. */
export function standardLimits(counter: ToggleCounter, settings: Config): ToggleLimits {
  return counter === "likes"
    ? { perMinute: settings.RATE_LIMIT_PER_MINUTE, perDay: settings.RATE_LIMIT_PER_DAY }
    : { perMinute: settings.SAVE_RATE_LIMIT_PER_MINUTE, perDay: settings.SAVE_RATE_LIMIT_PER_DAY };
}

/** A tier's limits: its share of the standard ones, never below one a period (a tier slows, the purge bars). */
export function tierLimits(counter: ToggleCounter, share: number, settings: Config): ToggleLimits {
  const standard = standardLimits(counter, settings);
  return { perMinute: Math.max(1, Math.floor(standard.perMinute * share)), perDay: Math.max(1, Math.floor(standard.perDay * share)) };
}

const asView = (limits: ToggleLimits) => ({ per_minute: limits.perMinute, per_day: limits.perDay });

/**
 * What an operator needs to explain a user's 429s: the standard limits, each
 * tier's stricter ones, and what selects a tier. The standing travels in the
 * user's tokens, not in storage, so this is every limit that can be in force
 * for the user and the rule that picks one, per request.
 */
export function limitsView(settings: Config): LimitsView {
  const both = (pick: (counter: ToggleCounter) => ToggleLimits) => ({ likes: asView(pick("likes")), saves: asView(pick("saves")) });
  return {
    standard: both((counter) => standardLimits(counter, settings)),
    tiers: Object.fromEntries(
      Object.entries(settings.STANDING_TIERS).map(([tier, share]) => [tier, { share, ...both((counter) => tierLimits(counter, share, settings)) }]),
    ),
    selected_by: {
      standing_claim: settings.AUTH_STANDING_CLAIM || null,
      bot_score_below: settings.BOT_SCORE_THRESHOLD,
      bot_score_tier: settings.BOT_SCORE_STANDING,
      rule: "the strictest tier named by the token's standing claim or by a bot score under the threshold; otherwise standard",
    },
    platform: {
      per_ip: "WRITE_IP_LIMITER and READ_IP_LIMITER (wrangler.toml), IPv6 counted by its /64",
      per_device: settings.AUTH_DEVICE_CLAIM ? `WRITE_DEVICE_LIMITER, keyed by the token's ${settings.AUTH_DEVICE_CLAIM} claim` : null,
    },
  };
}
