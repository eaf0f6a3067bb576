import { describe, expect, it } from "vitest";
import { isRetryable, withRetries } from "../../shared/retries";

describe("what is retried", () => {
  it("retries what the platform marks retryable or reset under new code, never an overloaded object or a plain error", () => {
    expect(isRetryable(Object.assign(new Error("x"), { retryable: true }))).toBe(true);
    expect(isRetryable(Object.assign(new Error("Durable Object reset because its code was updated."), { durableObjectReset: true }))).toBe(true);
    expect(isRetryable(Object.assign(new Error("x"), { retryable: true, overloaded: true }))).toBe(false);
    expect(isRetryable(Object.assign(new Error("x"), { durableObjectReset: true, overloaded: true }))).toBe(false);
    expect(isRetryable(new Error("a bug"))).toBe(false);
    expect(isRetryable(null)).toBe(false);
  });

  it("calls again after a reset, with a fresh call each time, and gives up after its attempts", async () => {
    let calls = 0;
    const reset = () => Object.assign(new Error("reset"), { durableObjectReset: true });
    expect(
      await withRetries(async () => {
        if (++calls < 3) throw reset();
        return "answered";
      }),
    ).toBe("answered");
    expect(calls).toBe(3);
    calls = 0;
    await expect(withRetries(async () => (calls++, Promise.reject(reset())), 2)).rejects.toThrow("reset");
    expect(calls).toBe(2);
  });
});
