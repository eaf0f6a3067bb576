import { afterEach, describe, expect, it, vi } from "vitest";
import { AfterAnswer, withAfterAnswer } from "../../workers/lib/after-answer";

/** An execution context that keeps what it was asked to wait for. */
function context() {
  const waited: Promise<unknown>[] = [];
  return { waited, waitUntil: (promise: Promise<unknown>) => void waited.push(promise) };
}

describe("work begun after the answer", () => {
  afterEach(() => vi.useRealTimers());

  it("begins nothing when added, nor as the handler returns, only in the runtime's next turn", async () => {
    vi.useFakeTimers();
    const ctx = context();
    const after = new AfterAnswer(ctx);
    const begun: string[] = [];
    after.add(async () => void begun.push("refresh"));
    await Promise.resolve();
    expect(begun).toEqual([]);
    after.start();
    // Everything the handler's own continuation does runs in microtasks: the task is not among them.
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(begun).toEqual([]);
    await vi.runAllTimersAsync();
    expect(begun).toEqual(["refresh"]);
    expect(ctx.waited).toHaveLength(1);
  });

  it("keeps the request alive for every task, and a failing one neither stops the others nor rejects", async () => {
    const ctx = context();
    const after = new AfterAnswer(ctx);
    const done: string[] = [];
    after.add(async () => {
      throw new Error("store down");
    });
    after.add(async () => void done.push("second"));
    after.start();
    await expect(Promise.all(ctx.waited)).resolves.toEqual([[undefined, undefined]]);
    expect(done).toEqual(["second"]);
  });

  it("asks the runtime for nothing when there is nothing to do", () => {
    const ctx = context();
    new AfterAnswer(ctx).start();
    expect(ctx.waited).toHaveLength(0);
  });

  it("begins what a handler collected when it answers and when it throws, and passes the outcome on", async () => {
    const ctx = context();
    const begun: string[] = [];
    await expect(withAfterAnswer(ctx, async (after) => (after.add(async () => void begun.push("a")), "answer"))).resolves.toBe("answer");
    await expect(
      withAfterAnswer(ctx, async (after) => {
        after.add(async () => void begun.push("b"));
        throw new Error("404");
      }),
    ).rejects.toThrow("404");
    await Promise.all(ctx.waited);
    expect(begun).toEqual(["a", "b"]);
  });
});
