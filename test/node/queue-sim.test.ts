import { describe, expect, it } from "vitest";
import { simulateQueue } from "../../bench/lib/queue-sim";

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
