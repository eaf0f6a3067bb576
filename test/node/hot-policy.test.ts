import { describe, expect, it } from "vitest";
import { decideFlip, forecastAverage, nextHotCheck, rateKeepSeconds, type HotSettings } from "../../durable-objects/lib/hot-policy";
import { WriteRate } from "../../durable-objects/lib/write-rate";

const SETTINGS: HotSettings = {
  hotRate: 100,
  hotWindow: 10,
  coolRate: 10,
  coolWindow: 60,
  shards: 16,
  predictSeconds: 0,
  levelSmoothing: 0.5,
  trendSmoothing: 0.5,
  predictFloor: 0.1,
  growRate: 1000,
  maxShards: 1024,
};
/** A rate that is `perSecond` over any window and in every second, measured for `observedSeconds`. */
const rate = (perSecond: number, observedSeconds: number) => ({
  observedSeconds,
  perSecond: () => perSecond,
  lastSeconds: (seconds: number) => Array<number>(seconds).fill(perSecond),
});

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
    const view = { ...rate(0, 100), perSecond: (seconds: number) => (asked.push(seconds), 0) };
    decideFlip({ hot: false, shards: 0 }, view, SETTINGS);
    decideFlip({ hot: true, shards: 16 }, view, SETTINGS);
    // A hot item reads the hot window too: its growth is measured over it.
    expect(asked).toEqual([10, 10, 60]);
  });

  it("looks at an idle hot item twice: when its shown rate falls to zero, and when it can first cool", () => {
    const settings = { ...SETTINGS, coolWindow: 3600 };
    const split = 1_000_000;
    const measured = new WriteRate(split, rateKeepSeconds(settings));
    for (let second = 0; second < 30; second++) measured.record(2_000, split + second * 1000 + 100);
    const lastWrite = split + 29_000 + 100;
    // The recheck's rule reads the end of the last second written in.
    expect(measured.lastWriteAt()).toBe(split + 30_000);
    const looks: number[] = [];
    let now = lastWrite;
    for (;;) {
      const next = nextHotCheck(measured, settings, now);
      expect(next).not.toBeNull();
      now = next!;
      looks.push(now);
      if (decideFlip({ hot: true, shards: 16 }, measured.view(now), settings)) break;
      expect(looks.length).toBeLessThan(10);
    }
    // Ten seconds after the last write the shown rate is zero. The cool
    // window (36,000 writes at most) then has to slide past 13 of the 30
    // busy seconds (60,000 writes).
    expect(looks).toEqual([split + 39_000, split + 12_000 + 3_600_000]);
    expect(measured.displayed(looks[0]!)).toBe(0);
    expect(measured.displayed(looks[0]! - 1)).toBeGreaterThan(0);
  });

  it("puts the cooling check at the first moment the decision cools, neither early nor late", () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let run = 0; run < 200; run++) {
      const split = 5_000_000 + Math.floor(random() * 1000);
      const measured = new WriteRate(split, rateKeepSeconds(SETTINGS));
      const seconds = 1 + Math.floor(random() * 90);
      for (let s = 0; s < seconds; s++) measured.record(Math.floor(random() * 40), split + s * 1000);
      const now = split + seconds * 1000;
      // Half the runs with a cool window of fractional seconds, which the settings allow.
      const settings = { ...SETTINGS, coolRate: 1 + Math.floor(random() * 20), coolWindow: random() < 0.5 ? 60 : 59.5 };
      const cools = (t: number) => decideFlip({ hot: true, shards: 16 }, measured.view(t), settings) !== null;
      // With no write, cooling only begins on a second's boundary or when the window is first measured.
      const moments = [measured.measuredAt(settings.coolWindow)];
      for (let t = Math.ceil(now / 1000) * 1000; t < now + 200_000; t += 1000) moments.push(t);
      const first = cools(now) ? now + 1_000 : Math.min(...moments.filter((t) => t > now && cools(t)));
      const looks = [nextHotCheck(measured, settings, now)!];
      while (!cools(looks.at(-1)!)) looks.push(nextHotCheck(measured, settings, looks.at(-1)!)!);
      expect(looks.at(-1)).toBe(first);
      expect(looks.length).toBeLessThanOrEqual(2);
    }
  });

  it("a write before the check puts it later, and a rate that can never fall under the cool rate asks for none", () => {
    const split = 2_000_000;
    const measured = new WriteRate(split, rateKeepSeconds(SETTINGS));
    measured.record(1_000, split + 100);
    expect(nextHotCheck(measured, SETTINGS, split + 20_000)).toBe(split + 60_000);
    measured.record(1_000, split + 30_500);
    expect(nextHotCheck(measured, SETTINGS, split + 50_000)).toBe(split + 90_000);
    // Not before the earliest cooling the head stored, which a restarted head's empty rate knows nothing of.
    expect(nextHotCheck(new WriteRate(split, rateKeepSeconds(SETTINGS)), SETTINGS, split + 70_000, split + 200_000)).toBe(split + 200_000);
    const never = new WriteRate(split, rateKeepSeconds(SETTINGS));
    expect(nextHotCheck(never, { ...SETTINGS, coolRate: 0 }, split + 1_000)).toBeNull();
    expect(nextHotCheck(never, SETTINGS, split + 70_000)).toBe(split + 71_000);
  });

  it("remembers enough seconds of writes for both windows and the operators' ten", () => {
    expect(rateKeepSeconds(SETTINGS)).toBe(60);
    expect(rateKeepSeconds({ ...SETTINGS, hotWindow: 1, coolWindow: 2 })).toBe(10);
  });
});

/** The bench's viral scale: hot past 30 writes/s over 5 s, forecasts over the last 5 s. */
const VIRAL: HotSettings = { ...SETTINGS, hotRate: 30, hotWindow: 5, coolWindow: 10, coolRate: 3, shards: 8, predictSeconds: 5 };

/**
 * Feeds a write rate second by second through the head's own measurement,
 * on a clock the test moves, and returns the second in which the decision
 * first splits the item (or null).
 */
function splitSecond(perSecond: (second: number) => number, settings: HotSettings, seconds = 60): number | null {
  const start = 1_000_000;
  const rate = new WriteRate(start, rateKeepSeconds(settings));
  for (let second = 0; second < seconds; second++) {
    // Spread over the second as micro-batches arrive, with the decision after each one.
    for (let tick = 0; tick < 5; tick++) {
      const now = start + second * 1000 + tick * 200;
      rate.record(Math.round(perSecond(second) / 5), now);
      if (decideFlip({ hot: false, shards: 0 }, rate.view(now), settings)) return second;
    }
  }
  return null;
}

describe("predicted splits", () => {
  const doubling = (second: number) => 5 * 2 ** Math.floor(second / 2);

  it("splits a rate that doubles every two seconds before the window behind it averages the threshold", () => {
    const reactive = splitSecond(doubling, { ...VIRAL, predictSeconds: 0 });
    const predicted = splitSecond(doubling, VIRAL);
    expect(reactive).not.toBeNull();
    expect(predicted).not.toBeNull();
    expect(predicted!).toBeLessThan(reactive!);
  });

  it("does not split a steady rate under the threshold, however long it lasts", () => {
    expect(splitSecond(() => 25, VIRAL, 120)).toBeNull();
  });

  it("does not split on a lone burst, nor on a trickle under the floor", () => {
    expect(splitSecond((s) => (s === 10 ? 29 : 0), VIRAL)).toBeNull();
    expect(splitSecond((s) => (s < 8 ? 0 : s - 7), { ...VIRAL, predictFloor: 0.5 }, 20)).toBeNull();
  });

  it("forecasts a flat series as its level and a straight ramp ahead of it", () => {
    expect(forecastAverage([10, 10, 10, 10], 5, VIRAL)).toBeCloseTo(10);
    expect(forecastAverage([2, 4, 6, 8, 10], 5, VIRAL)).toBeGreaterThan(10);
  });

  it("reads whole seconds only, oldest first, the one still filling left out", () => {
    const rate = new WriteRate(0, 10);
    rate.record(3, 1_500);
    rate.record(4, 3_100);
    rate.record(9, 4_200);
    expect(rate.lastSeconds(4, 4_900)).toEqual([0, 3, 0, 4]);
  });

  it("shows operators the writes of the second measuring started in, after the clock crossed into the next", () => {
    const rate = new WriteRate(0, 10);
    rate.restart(1_900);
    rate.record(6, 1_950);
    expect(rate.displayed(2_200)).toBe(3);
    expect(rate.displayed(12_500)).toBe(0);
    rate.record(20, 12_600);
    expect(rate.displayed(12_700)).toBe(2);
  });
});

describe("the host app's hint", () => {
  it("splits a cold item with no writes at all, into the configured N", () => {
    expect(decideFlip({ hot: false, shards: 0 }, rate(0, 0), SETTINGS, true)).toEqual({ hot: true, shards: 16 });
  });

  it("keeps a hot item hot for that batch, even when it would have cooled", () => {
    expect(decideFlip({ hot: true, shards: 16 }, rate(0, 600), SETTINGS, true)).toBeNull();
  });
});

describe("predicted splits of a new item", () => {
  it("forecasts from the whole seconds the head has seen, from its third second on", () => {
    const settings = { ...VIRAL, predictSeconds: 5 };
    expect(splitSecond(() => 40, { ...settings, predictSeconds: 0 })).toBe(5);
    expect(splitSecond(() => 40, settings)).toBe(3);
    expect(splitSecond(() => 20, settings, 30)).toBeNull();
  });
});

describe("an item's N that grows", () => {
  const GROWING: HotSettings = { ...SETTINGS, growRate: 50 };

  it("grows a hot item's N fourfold once its children averaged the growth rate each over a hot window", () => {
    expect(decideFlip({ hot: true, shards: 16 }, rate(800, 10), GROWING)).toEqual({ hot: true, shards: 64 });
    expect(decideFlip({ hot: true, shards: 64 }, rate(3200, 10), GROWING)).toEqual({ hot: true, shards: 256 });
  });

  it("waits for a whole hot window since the split or the last growth, and for the rate", () => {
    expect(decideFlip({ hot: true, shards: 16 }, rate(800, 9.9), GROWING)).toBeNull();
    expect(decideFlip({ hot: true, shards: 16 }, rate(799, 100), GROWING)).toBeNull();
  });

  it("stops at the largest N", () => {
    expect(decideFlip({ hot: true, shards: 1024 }, rate(1e9, 100), GROWING)).toBeNull();
    expect(decideFlip({ hot: true, shards: 16 }, rate(1e9, 100), { ...GROWING, maxShards: 63 })).toBeNull();
  });

  it("keeps the grown N through cooling and the next hot period", () => {
    expect(decideFlip({ hot: true, shards: 64 }, rate(0, 600), GROWING)).toEqual({ hot: false, shards: 64 });
    expect(decideFlip({ hot: false, shards: 64 }, rate(100, 10), GROWING)).toEqual({ hot: true, shards: 64 });
  });
});
