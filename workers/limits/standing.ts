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
