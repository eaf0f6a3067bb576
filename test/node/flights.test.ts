// A request waiting on reads other requests of its isolate have in flight
// (workers/reads/flights.ts): it polls their outcomes with its own timers, one
// at a time however many items it waits on, until all landed or the wait ran out.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { waitForFlights, type Flight } from "../../workers/reads/flights";

const land = (flight: Flight<number>, result: number) => Object.assign(flight, { done: true, result });

describe("waiting on other requests' store reads", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => {
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  it("waits on 50 items with one timer at a time, and ends once the last of them landed", async () => {
    const flights: Flight<number>[] = Array.from({ length: 50 }, () => ({ done: false }));
    const timers = vi.spyOn(globalThis, "setTimeout");
    let ended = false;
    const waited = waitForFlights(flights, 1_000).then(() => (ended = true));
    for (const [i, flight] of flights.entries()) {
      await vi.advanceTimersByTimeAsync(1);
      expect(vi.getTimerCount()).toBeLessThanOrEqual(1);
      expect(ended).toBe(false);
      land(flight, i);
    }
    // Ended at the first poll after the last landed.
    await vi.advanceTimersByTimeAsync(2);
    expect(ended).toBe(true);
    await waited;
    // 50 ms of waiting polled every 2 ms: about 26 timers in all, where a timer per item would have set over 600.
    expect(timers.mock.calls.length).toBeGreaterThanOrEqual(25);
    expect(timers.mock.calls.length).toBeLessThanOrEqual(27);
  });

  it("gives up after its wait on a read that never lands, whatever the others did", async () => {
    const flights: Flight<number>[] = Array.from({ length: 3 }, () => ({ done: false }));
    let ended = false;
    const waited = waitForFlights(flights, 1_000).then(() => (ended = true));
    land(flights[0]!, 7);
    land(flights[2]!, 9);
    await vi.advanceTimersByTimeAsync(990);
    expect(ended).toBe(false);
    await vi.advanceTimersByTimeAsync(20);
    expect(ended).toBe(true);
    await waited;
    // Given up, it leaves no timer behind.
    expect(vi.getTimerCount()).toBe(0);
  });

  it("sets no timer when every flight had already landed", async () => {
    const timers = vi.spyOn(globalThis, "setTimeout");
    await waitForFlights([land({ done: false }, 1), land({ done: false }, 2)], 1_000);
    expect(timers).not.toHaveBeenCalled();
  });
});
