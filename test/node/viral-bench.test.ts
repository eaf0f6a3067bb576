import { describe, expect, it } from "vitest";
import { simulateQueue } from "../../bench/lib/queue-sim";
import { headWritesPerSecond } from "../../bench/lib/viral-report";

describe("the single-object queueing simulation", () => {
  it("builds no delay while arrivals stay within capacity", () => {
    expect(simulateQueue([5, 10, 15, 15], 15)).toEqual({ peakLoad: 15, peakDelaySeconds: 0, backlogAtEnd: 0 });
  });

  it("carries a backlog from second to second and drains it at the capacity", () => {
    // 30 then 30: 15 left, then 30 more; then nothing arrives and 15 a second drain.
    const result = simulateQueue([30, 30, 0, 0, 0], 15);
    expect(result.peakLoad).toBe(30);
    expect(result.peakDelaySeconds).toBe(2);
    expect(result.backlogAtEnd).toBe(0);
  });

  it("refuses a capacity of zero", () => {
    expect(() => simulateQueue([1], 0)).toThrow();
  });
});

describe("the head's writes per second in the viral bench", () => {
  const sample = (t: number, applied: number) => ({ t, applied, hot: false, likes: applied });

  it("spreads a late sample's writes over the time since the previous one", () => {
    expect(headWritesPerSecond([sample(0, 0), sample(1_000, 10), sample(3_000, 30)])).toEqual([10, 10, 10]);
  });

  it("counts nothing after the last sample's writes", () => {
    expect(headWritesPerSecond([sample(0, 0), sample(500, 4), sample(2_000, 4)])).toEqual([4, 0]);
  });
});
