import type { ToggleLimits } from "../../shared/contracts";
import type { ToggleCounter } from "../../shared/counters";
import type { Config } from "../../shared/config";
import type { Principal } from "../types";

/** The stricter tier a request falls in, and what put it there. */
export type Standing = { tier: string; share: number; because: string[] };

/** Cloudflare's bot score (1: surely a bot, 99: surely a human), present only where Bot Management runs. */
export function botScore(request: Request): number | undefined {
  const score = (request.cf as { botManagement?: { score?: unknown } } | undefined)?.botManagement?.score;
  return typeof score === "number" ? score : undefined;
}

/**
 * The strictest tier among what the token states (its standing claim) and
 * what Cloudflare measured (a bot score under the threshold); null when
 * neither names a configured tier, and the standard limits hold.
 */
export function standingOf(principal: Principal, score: number | undefined, settings: Config): Standing | null {
  const found: { tier: string; why: string }[] = [];
  // Own keys only: a claim such as "constructor" must not reach Object.prototype.
  const named = (tier: string) => Object.hasOwn(settings.STANDING_TIERS, tier);
  if (principal.standing !== undefined && named(principal.standing)) {
    found.push({ tier: principal.standing, why: `token claim ${settings.AUTH_STANDING_CLAIM}=${principal.standing}` });
  }
  const bot = settings.BOT_SCORE_STANDING;
  if (score !== undefined && score < settings.BOT_SCORE_THRESHOLD && named(bot)) {
    found.push({ tier: bot, why: `bot score ${score} < ${settings.BOT_SCORE_THRESHOLD}` });
  }
  if (found.length === 0) return null;
  const strictest = found.reduce((a, b) => (settings.STANDING_TIERS[b.tier]! < settings.STANDING_TIERS[a.tier]! ? b : a));
  return { tier: strictest.tier, share: settings.STANDING_TIERS[strictest.tier]!, because: found.map((f) => f.why) };
}

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
export function limitsView(settings: Config) {
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
