import { describe, expect, it } from "vitest";
import { BreakerOpen, CircuitBreaker, type BreakerState } from "../../shared/circuit-breaker";
import { DeadlineExceeded, withDeadline } from "../../shared/deadline";

function breaker() {
  const clock = { now: 1_000 };
  const changes: BreakerState[] = [];
  const b = new CircuitBreaker("central", { failures: 3, openMs: 10_000, now: () => clock.now, onChange: (s) => changes.push(s) });
  return { b, clock, changes };
}
const fail = () => Promise.reject(new Error("store down"));
const succeed = () => Promise.resolve("ok");

describe("a circuit breaker", () => {
  it("stays closed through fewer failures in a row than its threshold, and a success resets the count", async () => {
    const { b } = breaker();
    await expect(b.call(fail)).rejects.toThrow("store down");
    await expect(b.call(fail)).rejects.toThrow("store down");
    await expect(b.call(succeed)).resolves.toBe("ok");
    await expect(b.call(fail)).rejects.toThrow("store down");
    await expect(b.call(fail)).rejects.toThrow("store down");
    expect(b.state).toBe("closed");
  });

  it("opens after repeated failures and then refuses without calling", async () => {
    const { b, changes } = breaker();
    for (let i = 0; i < 3; i++) await expect(b.call(fail)).rejects.toThrow("store down");
    expect(b.state).toBe("open");
    let called = false;
    await expect(
      b.call(async () => {
        called = true;
      }),
    ).rejects.toBeInstanceOf(BreakerOpen);
    expect(called).toBe(false);
    expect(changes).toEqual(["open"]);
  });

  it("lets one probe through when half-open: success closes it", async () => {
    const { b, clock, changes } = breaker();
    for (let i = 0; i < 3; i++) await expect(b.call(fail)).rejects.toThrow();
    clock.now += 10_000;
    expect(b.state).toBe("half_open");
    let release!: () => void;
    const probe = b.call(() => new Promise<string>((resolve) => (release = () => resolve("probe ok"))));
    await expect(b.call(succeed)).rejects.toBeInstanceOf(BreakerOpen);
    release();
    await expect(probe).resolves.toBe("probe ok");
    expect(b.state).toBe("closed");
    expect(changes).toEqual(["open", "half_open", "closed"]);
  });

  it("opens again for another period when the probe fails", async () => {
    const { b, clock } = breaker();
    for (let i = 0; i < 3; i++) await expect(b.call(fail)).rejects.toThrow();
    clock.now += 10_000;
    await expect(b.call(fail)).rejects.toThrow("store down");
    expect(b.state).toBe("open");
    clock.now += 9_999;
    expect(b.state).toBe("open");
    clock.now += 1;
    expect(b.state).toBe("half_open");
  });
});

describe("a deadline", () => {
  it("passes a timely answer through", async () => {
    await expect(withDeadline(Promise.resolve(7), 1_000, "d1")).resolves.toBe(7);
  });

  it("rejects a call that never answers, as retryable, naming the dependency", async () => {
    const never = new Promise<never>(() => {});
    const error = await withDeadline(never, 5, "central store").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeadlineExceeded);
    expect((error as DeadlineExceeded).retryable).toBe(true);
    expect(String(error)).toContain("central store");
  });

  it("passes the call's own failure through unchanged", async () => {
    await expect(withDeadline(Promise.reject(new Error("refused")), 1_000, "d1")).rejects.toThrow("refused");
  });
});
