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
  /** Holt's forecast over this many whole seconds of writes; 0: no forecast. */
  predictSeconds: number;
  levelSmoothing: number;
  trendSmoothing: number;
  /** The forecast counts only once the last whole second reached this share of `hotRate`. */
  predictFloor: number;
  /** A hot item's N grows by GROWTH once its children averaged this many writes a second each over a hot window... */
  growRate: number;
  /** ...up to this N. */
  maxShards: number;
};

/** How much an item's N grows in one step: 16, 64, 256, 1,024. */
export const GROWTH = 4;

/** What the head knows of its write rate when it decides. */
export type RateView = {
  /** Seconds of measurement behind the rate: a window longer than that says nothing yet. */
  observedSeconds: number;
  /** Writes per second over the last `seconds` seconds. */
  perSecond: (seconds: number) => number;
  /** Writes in each of the last `seconds` whole seconds, oldest first (the current, partial second left out). */
  lastSeconds: (seconds: number) => number[];
};

/**
 * The hot/cool decision, pure. A cold item turns hot when the host app hinted
 * it, when its rate stayed at `hotRate` over `hotWindow` seconds, or when the
 * forecast says the next hot window will average `hotRate`. A hot item's N
 * grows when its children near their capacity; it cools after its rate
 * stayed under `coolRate` for `coolWindow` seconds. Returns the new placement
 * when it changes, else null.
 */
export function decideFlip(current: Placement, rate: RateView, settings: HotSettings, hinted = false): Placement | null {
  if (!current.hot) {
    if (!hinted && !sustainedHot(rate, settings) && !forecastHot(rate, settings)) return null;
    // An item keeps the N it grew to: every hot period uses the same map, and a recorded home is never recomputed.
    return { hot: true, shards: current.shards > 0 ? current.shards : settings.shards };
  }
  if (grows(current, rate, settings)) return { hot: true, shards: current.shards * GROWTH };
  if (hinted || rate.observedSeconds < settings.coolWindow || rate.perSecond(settings.coolWindow) >= settings.coolRate) return null;
  return { hot: false, shards: current.shards };
}

/**
 * Whether a hot item's children are near their capacity: a whole hot window
 * since the item split or last grew, averaging `growRate` writes a second
 * per child, with room under `maxShards`.
 */
function grows(current: Placement, rate: RateView, settings: HotSettings): boolean {
  if (current.shards * GROWTH > settings.maxShards || rate.observedSeconds < settings.hotWindow) return false;
  return rate.perSecond(settings.hotWindow) >= settings.growRate * current.shards;
}

function sustainedHot(rate: RateView, settings: HotSettings): boolean {
  return rate.observedSeconds >= settings.hotWindow && rate.perSecond(settings.hotWindow) >= settings.hotRate;
}

/**
 * Whether Holt's forecast of the next hot window crosses the threshold. A
 * rate that doubles every few seconds crosses it seconds before the average
 * of the window behind does. The floor, which the last two seconds must both
 * reach, keeps a lone burst or a trickle from splitting an item on noise.
 */
function forecastHot(rate: RateView, settings: HotSettings): boolean {
  // Whole seconds measured from their start only: the one the head started in was partly unseen.
  const whole = Math.min(settings.predictSeconds, Math.floor(rate.observedSeconds) - 1);
  if (whole < 2) return false;
  const seconds = rate.lastSeconds(whole);
  if (Math.min(...seconds.slice(-2)) < settings.predictFloor * settings.hotRate) return false;
  return forecastAverage(seconds, settings.hotWindow, settings) >= settings.hotRate;
}

/**
 * Holt's double exponential smoothing (level and trend) over one-second
 * counts, oldest first: the average rate it forecasts over the next
 * `horizon` seconds.
 */
export function forecastAverage(seconds: readonly number[], horizon: number, smoothing: Pick<HotSettings, "levelSmoothing" | "trendSmoothing">): number {
  const { levelSmoothing: a, trendSmoothing: b } = smoothing;
  let level = seconds[0] ?? 0;
  let trend = 0;
  for (const x of seconds.slice(1)) {
    const previous = level;
    level = a * x + (1 - a) * (level + trend);
    trend = b * (level - previous) + (1 - b) * trend;
  }
  // The mean of level + h * trend for h = 1 .. horizon.
  return level + (trend * (horizon + 1)) / 2;
}

/** What the head's write rate says about when it next needs to look (lib/write-rate.ts). */
export type RateTimes = {
  underAt: (limit: number, seconds: number, now: number) => number | null;
  measuredAt: (seconds: number) => number;
};

/**
 * When a hot head next looks at itself if no write comes: when the rate it
 * shows operators falls to zero, so the dashboard's gauge does not keep the
 * last busy figure, and when the item can first cool (a whole cool window
 * measured, its writes in it under the cool rate). A write meanwhile only
 * puts either later, and the head then asks again: an item whose writes
 * stopped looks twice, not once a minute for its whole cool window. Not
 * before `coolsAt`, the earliest the item may cool by the writes the head
 * stored (ItemCounter.ts). Null when neither will ever come.
 */
export function nextHotCheck(rate: RateTimes, settings: HotSettings, now: number, coolsAt = 0): number | null {
  const shownZero = rate.underAt(Number.MIN_VALUE, RATE_DISPLAY_SECONDS, now);
  const cools = rate.underAt(settings.coolRate, settings.coolWindow, now);
  const times = [shownZero !== null && shownZero > now ? shownZero : null, cools === null ? null : Math.max(cools, rate.measuredAt(settings.coolWindow), coolsAt)];
  const due = times.filter((t): t is number => t !== null);
  if (due.length === 0) return null;
  const at = Math.min(...due);
  // Due already: the head is about to decide anyway, so a second later, never a loop of alarms.
  return at > now ? at : now + DUE_RETRY_MS;
}

const DUE_RETRY_MS = 1_000;

export function hotSettings(settings: Config): HotSettings {
  return {
    hotRate: settings.HOT_WRITES_PER_SEC,
    hotWindow: settings.HOT_WINDOW_SECONDS,
    coolRate: settings.COOL_WRITES_PER_SEC,
    coolWindow: settings.COOL_WINDOW_SECONDS,
    shards: settings.HOT_SHARDS,
    predictSeconds: settings.HOT_PREDICT_SECONDS,
    levelSmoothing: settings.HOT_PREDICT_LEVEL_SMOOTHING,
    trendSmoothing: settings.HOT_PREDICT_TREND_SMOOTHING,
    predictFloor: settings.HOT_PREDICT_FLOOR,
    growRate: settings.HOT_GROW_WRITES_PER_CHILD,
    maxShards: settings.HOT_MAX_SHARDS,
  };
}

/** How many seconds of writes the head must remember to decide and to display. */
export function rateKeepSeconds(settings: HotSettings): number {
  return Math.max(settings.coolWindow, settings.hotWindow, settings.predictSeconds + 1, RATE_DISPLAY_SECONDS);
}
