import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Soon } from "../../durable-objects/lib/soon";

// Fake timers: the wait is the behaviour under test, and no test waits real time for it.
describe("Soon, the timer that stores acknowledgements", () => {
  let runs = 0;
  const soon = () => new Soon("test_task_failed", 1_000, () => void runs++);
  beforeEach(() => {
    vi.useFakeTimers();
    runs = 0;
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  it("runs once the object has been quiet for the delay, however many requests came before", () => {
    const timer = soon();
    timer.request();
    vi.advanceTimersByTime(600);
    timer.request();
    vi.advanceTimersByTime(600);
    expect(runs).toBe(0);
    vi.advanceTimersByTime(400);
    expect(runs).toBe(1);
    vi.advanceTimersByTime(10_000);
    expect(runs).toBe(1);
  });

  it("runs at most four delays after the first request while requests keep coming", () => {
    const timer = soon();
    for (let t = 0; t < 4_000; t += 500) {
      timer.request();
      vi.advanceTimersByTime(500);
    }
    expect(runs).toBe(1);
  });

  it("waits afresh after a cancel: a commit that stored the acknowledgements leaves nothing to run", () => {
    const timer = soon();
    for (let t = 0; t < 3_500; t += 500) {
      timer.request();
      vi.advanceTimersByTime(500);
    }
    timer.cancel();
    timer.request();
    vi.advanceTimersByTime(999);
    expect(runs).toBe(0);
    vi.advanceTimersByTime(1);
    expect(runs).toBe(1);
  });

  it("runs nothing after a cancel with no request since, and runs on time after one that comes later", () => {
    const timer = soon();
    timer.request();
    vi.advanceTimersByTime(500);
    timer.cancel();
    vi.advanceTimersByTime(5_000);
    expect(runs).toBe(0);
    timer.request();
    vi.advanceTimersByTime(999);
    expect(runs).toBe(0);
    vi.advanceTimersByTime(1);
    expect(runs).toBe(1);
  });

  it("sets one timer for many requests within a delay, and clears none", () => {
    const set = vi.spyOn(globalThis, "setTimeout");
    const cleared = vi.spyOn(globalThis, "clearTimeout");
    const timer = soon();
    for (let i = 0; i < 20; i++) {
      timer.request();
      vi.advanceTimersByTime(40);
    }
    timer.cancel();
    vi.advanceTimersByTime(5_000);
    expect(set).toHaveBeenCalledTimes(1);
    expect(cleared).not.toHaveBeenCalled();
    expect(runs).toBe(0);
  });

  it("keeps its timer alive when the task throws", () => {
    const timer = new Soon("test_task_failed", 1_000, () => {
      runs++;
      throw new Error("storage reset");
    });
    timer.request();
    vi.advanceTimersByTime(1_000);
    timer.request();
    vi.advanceTimersByTime(1_000);
    expect(runs).toBe(2);
  });
});
