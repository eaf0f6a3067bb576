import { describe, expect, it } from "vitest";
import { planRecheck, rechecking, type RecheckMark, type RecheckSettings } from "../../durable-objects/lib/recheck-policy";

const SETTINGS: RecheckSettings = { intervalMs: 30_000, likes: 100_000 };
const LARGE = 100_000;
/** The emitter's alarm comes this long after a change (durable-objects/lib/emitter.ts). */
const EMIT_MS = 1_000;

/**
 * A large item's head, not hot, that changes at the given times: its one
 * alarm (the earliest request wins) is asked for by the emitter after each
 * change and by each plan; returns when it sent a recheck request.
 */
function requestsOfLargeItem(changes: readonly number[], likes = LARGE): number[] {
  const sent: number[] = [];
  const pending = [...changes];
  let mark: RecheckMark | null = null;
  let alarm: number | null = null;
  let seq = 0;
  const schedule = (at: number) => {
    if (alarm === null || at < alarm) alarm = at;
  };
  while (pending.length > 0 || alarm !== null) {
    if (pending.length > 0 && (alarm === null || pending[0]! <= alarm)) {
      seq++;
      schedule(pending.shift()! + EMIT_MS);
      continue;
    }
    const now: number = alarm!;
    alarm = null;
    const plan = planRecheck(now, { hot: false, likes, seq, lastWriteAt: null }, mark, SETTINGS);
    if (plan.send) {
      sent.push(now);
      mark = plan.mark;
    }
    if (plan.wakeAt !== null) schedule(plan.wakeAt);
  }
  return sent;
}

describe("when a head asks for its stores to be rechecked", () => {
  it("rechecks a hot item at once when it knows of no recheck, then every interval", () => {
    expect(planRecheck(5_000, { hot: true, likes: 10, seq: 3, lastWriteAt: 4_000 }, null, SETTINGS)).toEqual({ send: true, mark: { at: 5_000, seq: 3 }, wakeAt: 35_000 });
    expect(planRecheck(20_000, { hot: true, likes: 10, seq: 4, lastWriteAt: 19_000 }, { at: 5_000, seq: 3 }, SETTINGS)).toEqual({ send: false, wakeAt: 35_000 });
  });

  it("keeps rechecking a hot item whose counts stand still while it takes writes, and stops when it cools", () => {
    const mark = { at: 5_000, seq: 3 };
    expect(planRecheck(35_000, { hot: true, likes: 10, seq: 3, lastWriteAt: 34_000 }, mark, SETTINGS)).toEqual({ send: true, mark: { at: 35_000, seq: 3 }, wakeAt: 65_000 });
    expect(planRecheck(35_000, { hot: false, likes: 10, seq: 3, lastWriteAt: 34_000 }, mark, SETTINGS)).toEqual({ send: false, wakeAt: null });
  });

  it("rechecks a hot item whose writes stopped once more, an interval on, and then asks for nothing while it stays hot", () => {
    const lastWriteAt = 20_000;
    const item = { hot: true, likes: 10, seq: 3, lastWriteAt };
    // The recheck after the last write still sees it within its interval, so one more follows.
    expect(planRecheck(35_000, item, { at: 5_000, seq: 3 }, SETTINGS)).toEqual({ send: true, mark: { at: 35_000, seq: 3 }, wakeAt: 65_000 });
    expect(planRecheck(65_000, item, { at: 35_000, seq: 3 }, SETTINGS)).toEqual({ send: true, mark: { at: 65_000, seq: 3 }, wakeAt: null });
    expect(rechecking(item, { at: 65_000, seq: 3 }, SETTINGS)).toBe(false);
    // A head woken after an eviction remembers no write: with its counts as last rechecked, it asks for nothing.
    expect(planRecheck(900_000, { ...item, lastWriteAt: null }, { at: 65_000, seq: 3 }, SETTINGS)).toEqual({ send: false, wakeAt: null });
    // A change brings them back.
    expect(planRecheck(900_000, { ...item, seq: 4, lastWriteAt: null }, { at: 65_000, seq: 3 }, SETTINGS)).toEqual({ send: true, mark: { at: 900_000, seq: 4 }, wakeAt: null });
  });

  it("never rechecks an item that is neither hot nor at the likes threshold", () => {
    expect(rechecking({ hot: false, likes: LARGE - 1, seq: 50, lastWriteAt: 900 }, null, SETTINGS)).toBe(false);
    expect(planRecheck(1_000, { hot: false, likes: LARGE - 1, seq: 50, lastWriteAt: 900 }, null, SETTINGS)).toEqual({ send: false, wakeAt: null });
    expect(requestsOfLargeItem([0, 5_000, 10_000], LARGE - 1)).toEqual([]);
  });

  it("rechecks an item at the likes threshold only while it changes", () => {
    expect(rechecking({ hot: false, likes: LARGE, seq: 7, lastWriteAt: null }, { at: 0, seq: 6 }, SETTINGS)).toBe(true);
    expect(rechecking({ hot: false, likes: LARGE, seq: 7, lastWriteAt: null }, { at: 0, seq: 7 }, SETTINGS)).toBe(false);
  });

  it("rechecks a large item once an interval while it changes, and last after its last change", () => {
    const changes = Array.from({ length: 21 }, (_, i) => i * 5_000);
    expect(requestsOfLargeItem(changes)).toEqual([1_000, 31_000, 61_000, 91_000, 121_000]);
  });

  it("rechecks a large item that changes once, once", () => {
    expect(requestsOfLargeItem([7_000])).toEqual([8_000]);
  });

  it("rechecks nothing for an item never counted, even when it was hinted hot", () => {
    expect(planRecheck(1_000, { hot: true, likes: 0, seq: 0, lastWriteAt: 900 }, null, SETTINGS)).toEqual({ send: false, wakeAt: null });
  });
});
