import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DeadlineClock, DeadlineExceeded } from "../../shared/deadline";

const never = () => new Promise<never>(() => undefined);

/** Settles `promise` into what it resolved to or the error it was rejected with, without waiting. */
function watch<T>(promise: Promise<T>): { outcome?: T | Error } {
  const seen: { outcome?: T | Error } = {};
  promise.then(
    (value) => (seen.outcome = value),
    (error: Error) => (seen.outcome = error),
  );
  return seen;
}

// Fake timers: the deadline is the behaviour under test, and no test waits real time for it.
describe("a deadline clock, one object's deadlines on as few timers as it can", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => {
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  it("answers with the work's result in time, and fails only the calls past their own deadline", async () => {
    const clock = new DeadlineClock();
    const answered = watch(clock.within(Promise.resolve(7), 1_000, "a"));
    const hung = watch(clock.within(never(), 1_000, "b"));
    await vi.advanceTimersByTimeAsync(500);
    const later = watch(clock.within(never(), 1_000, "c"));
    await vi.advanceTimersByTimeAsync(499);
    expect(answered.outcome).toBe(7);
    expect(hung.outcome).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(hung.outcome).toBeInstanceOf(DeadlineExceeded);
    expect((hung.outcome as DeadlineExceeded).message).toBe("b did not answer within 1000 ms");
    expect(later.outcome).toBeUndefined();
    await vi.advanceTimersByTimeAsync(500);
    expect(later.outcome).toBeInstanceOf(DeadlineExceeded);
  });

  it("fails a shorter deadline that came after a longer one at its own time", async () => {
    const clock = new DeadlineClock();
    const long = watch(clock.within(never(), 5_000, "long"));
    const short = watch(clock.within(never(), 300, "short"));
    await vi.advanceTimersByTimeAsync(300);
    expect(short.outcome).toBeInstanceOf(DeadlineExceeded);
    expect(long.outcome).toBeUndefined();
    await vi.advanceTimersByTimeAsync(4_700);
    expect(long.outcome).toBeInstanceOf(DeadlineExceeded);
  });

  it("passes on the work's own failure", async () => {
    const clock = new DeadlineClock();
    await expect(clock.within(Promise.reject(new Error("refused")), 1_000, "a")).rejects.toThrow("refused");
  });

  it("sets one timer for a burst of calls that answer in time, clears none, and sets none once they are done", async () => {
    const set = vi.spyOn(globalThis, "setTimeout");
    const cleared = vi.spyOn(globalThis, "clearTimeout");
    const clock = new DeadlineClock();
    for (let i = 0; i < 50; i++) {
      await clock.within(Promise.resolve(i), 1_000, "call");
      await vi.advanceTimersByTimeAsync(10);
    }
    expect(set).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(set).toHaveBeenCalledTimes(1);
    expect(cleared).not.toHaveBeenCalled();
  });
});
