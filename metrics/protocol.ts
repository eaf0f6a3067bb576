import type { Series, SeriesMap } from "./series";

/** What an isolate flushes: its changes since the last batch, numbered so a resend applies once. */
export type FlushBatch = { source: string; seq: number; series: Series[] };

/** One metrics accumulator's answer: its totals and the sums of its recent slots since `since` (ms). */
export type WindowRead = { since: number; series: Series[] };
export type AccumulatorRead = { now: number; totals: Series[]; recent: WindowRead; alert: WindowRead };

export type Window = { seconds: number; series: SeriesMap };

/** Every accumulator's series, added up; windows cover the last few seconds (`recent`) and five minutes (`alert`). */
export type MetricsRead = { totals: SeriesMap; recent: Window; alert: Window };
