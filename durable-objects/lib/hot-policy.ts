import type { Config } from "../../shared/config";
import type { Placement } from "../../shared/placement";

/** The write rate shown to operators is measured over this many seconds. */
export const RATE_DISPLAY_SECONDS = 10;

/** The thresholds of the hot/cool decision (shared/config.ts holds their defaults). */
export type HotSettings = {
  hotRate: number;
  hotWindow: number;
  coolRate: number;
  coolWindow: number;
  shards: number;
};

/** What the head knows of its write rate when it decides. */
export type RateView = {
  /** Seconds of measurement behind the rate: a window longer than that says nothing yet. */
  observedSeconds: number;
  /** Writes per second over the last `seconds` seconds. */
  perSecond: (seconds: number) => number;
};

/**
 * The hot/cool decision, pure: hot after `hotRate` writes a second sustained
 * over `hotWindow` seconds; cool after the rate stayed under `coolRate` for
 * `coolWindow` seconds. Returns the new placement when it changes, else null.
 */
export function decideFlip(current: Placement, rate: RateView, settings: HotSettings): Placement | null {
  if (!current.hot) {
    if (rate.observedSeconds < settings.hotWindow || rate.perSecond(settings.hotWindow) < settings.hotRate) return null;
    // WARNING: an item's N is fixed once chosen: the same children serve every hot period.
    return { hot: true, shards: current.shards > 0 ? current.shards : settings.shards };
  }
  if (rate.observedSeconds < settings.coolWindow || rate.perSecond(settings.coolWindow) >= settings.coolRate) return null;
  return { hot: false, shards: current.shards };
}

/**
 * When the head should next check whether a hot item cooled: after one cool
 * window, and at least once a minute for long windows.
 */
export function nextCoolingCheck(now: number, coolWindowSeconds: number): number {
  return now + Math.min(coolWindowSeconds, 60) * 1000;
}

export function hotSettings(settings: Config): HotSettings {
  return {
    hotRate: settings.HOT_WRITES_PER_SEC,
    hotWindow: settings.HOT_WINDOW_SECONDS,
    coolRate: settings.COOL_WRITES_PER_SEC,
    coolWindow: settings.COOL_WINDOW_SECONDS,
    shards: settings.HOT_SHARDS,
  };
}

/** How many seconds of writes the head must remember to decide and to display. */
export function rateKeepSeconds(settings: HotSettings): number {
  return Math.max(settings.coolWindow, settings.hotWindow, RATE_DISPLAY_SECONDS);
}
