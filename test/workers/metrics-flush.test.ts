import { afterEach, describe, expect, it, vi } from "vitest";
import { scheduleFlush } from "../../metrics/flush";
import { metrics } from "../../metrics/recorder";

describe("an isolate's metrics flush", () => {
  afterEach(() => vi.useRealTimers());

  it("begins 100 ms after an object asks for it mid-request, never in that request's own turns", async () => {
    vi.useFakeTimers();
    vi.spyOn(console, "log").mockImplementation(() => {});
    const waited: Promise<unknown>[] = [];
    metrics.count("flush_timing_probe_total", {});
    // No accumulator is bound here: the flush takes the batch and keeps it for a resend.
    scheduleFlush({} as Env, { waitUntil: (promise) => void waited.push(promise) });
    expect(waited).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(99);
    expect(metrics.idle).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(metrics.idle).toBe(true);
    await Promise.all(waited);
  });
});
