import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { scheduleFlush } from "../../metrics/flush";
import { metrics } from "../../metrics/recorder";

describe("an isolate's metrics flush", () => {
  afterEach(() => vi.useRealTimers());

  it("begins 100 ms after an object asks for it mid-request, never in that request's own turns", async () => {
    vi.useFakeTimers();
    const waited: Promise<unknown>[] = [];
    metrics.count("flush_timing_probe_total", {});
    // This file runs alone: nothing has flushed in its isolate, so the flush is not held for a trailing second.
    scheduleFlush(env, { waitUntil: (promise) => void waited.push(promise) });
    expect(waited).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(99);
    expect(metrics.idle).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(metrics.idle).toBe(true);
    vi.useRealTimers();
    await Promise.all(waited);
  });
});
