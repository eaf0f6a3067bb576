import { describe, expect, it } from "vitest";
import { decideFlip, nextCoolingCheck, rateKeepSeconds, type HotSettings } from "../../durable-objects/lib/hot-policy";

const SETTINGS: HotSettings = { hotRate: 100, hotWindow: 10, coolRate: 10, coolWindow: 60, shards: 16 };
/** A rate that is `perSecond` over any window, measured for `observedSeconds`. */
const rate = (perSecond: number, observedSeconds: number) => ({ observedSeconds, perSecond: () => perSecond });

describe("the hot/cool decision", () => {
  it("splits a cold item whose rate stayed at the threshold for a whole hot window, into the configured N", () => {
    expect(decideFlip({ hot: false, shards: 0 }, rate(100, 10), SETTINGS)).toEqual({ hot: true, shards: 16 });
  });

  it("keeps an item's N once chosen, whatever the setting says now", () => {
    expect(decideFlip({ hot: false, shards: 4 }, rate(500, 30), SETTINGS)).toEqual({ hot: true, shards: 4 });
  });

  it("does not split below the rate, nor before a whole window was observed", () => {
    expect(decideFlip({ hot: false, shards: 0 }, rate(99.9, 30), SETTINGS)).toBeNull();
    expect(decideFlip({ hot: false, shards: 0 }, rate(1000, 9.9), SETTINGS)).toBeNull();
  });

  it("merges a hot item only after a whole cool window under the cool rate, keeping N", () => {
    expect(decideFlip({ hot: true, shards: 16 }, rate(9, 60), SETTINGS)).toEqual({ hot: false, shards: 16 });
    expect(decideFlip({ hot: true, shards: 16 }, rate(10, 600), SETTINGS)).toBeNull();
    expect(decideFlip({ hot: true, shards: 16 }, rate(0, 59), SETTINGS)).toBeNull();
  });

  it("reads each window's own rate", () => {
    const asked: number[] = [];
    const view = { observedSeconds: 100, perSecond: (seconds: number) => (asked.push(seconds), 0) };
    decideFlip({ hot: false, shards: 0 }, view, SETTINGS);
    decideFlip({ hot: true, shards: 16 }, view, SETTINGS);
    expect(asked).toEqual([10, 60]);
  });

  it("checks a hot item's cooling after one cool window, at least once a minute", () => {
    expect(nextCoolingCheck(1_000, 2)).toBe(3_000);
    expect(nextCoolingCheck(1_000, 3600)).toBe(61_000);
  });

  it("remembers enough seconds of writes for both windows and the operators' ten", () => {
    expect(rateKeepSeconds(SETTINGS)).toBe(60);
    expect(rateKeepSeconds({ ...SETTINGS, hotWindow: 1, coolWindow: 2 })).toBe(10);
  });
});
