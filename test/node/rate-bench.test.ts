import { describe, expect, it } from "vitest";
import { parseStat } from "../../bench/lib/cpu";
import { arrivalTimes, openLoop, UserPool, type Clock } from "../../bench/lib/schedule";
import { options } from "../../bench/options";

/** A clock the test moves by hand: a sleep ends when the test sets the time past it, so no test waits on real time. */
function manualClock(): Clock & { set(ms: number): void } {
  let now = 0;
  const sleepers: { at: number; wake: () => void }[] = [];
  return {
    now: () => now,
    sleepUntil: (at) => (at <= now ? Promise.resolve() : new Promise<void>((wake) => sleepers.push({ at, wake }))),
    set: (ms) => {
      now = ms;
      for (const sleeper of sleepers.filter((s) => s.at <= now)) {
        sleepers.splice(sleepers.indexOf(sleeper), 1);
        sleeper.wake();
      }
    },
  };
}

const seeded = () => {
  let x = 1;
  return () => ((x = (x * 48271) % 2147483647) / 2147483647);
};

describe("the bench's --rate schedule", () => {
  it("spaces arrivals 1000/R ms apart for R x seconds arrivals, the same for every run", () => {
    expect(arrivalTimes(4, 1)).toEqual([0, 250, 500, 750]);
    expect(arrivalTimes(40, 10)).toHaveLength(400);
    expect(arrivalTimes(2.5, 2)).toEqual([0, 400, 800, 1200, 1600]);
    expect(arrivalTimes(40, 10)).toEqual(arrivalTimes(40, 10));
  });

  it("sends every arrival without waiting for earlier answers, then waits for all of them", async () => {
    const clock = manualClock();
    const answers: (() => void)[] = [];
    let sent = 0;
    let answered = 0;
    const run = openLoop(arrivalTimes(10, 1), new UserPool(["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"], seeded()), async () => {
      sent++;
      await new Promise<void>((resolve) => answers.push(resolve));
      answered++;
    }, clock);
    // No answer has come, yet every arrival was sent when its time came: the loop is open.
    for (let at = 100; at <= 900; at += 100) clock.set(at);
    await expect.poll(() => sent).toBe(10);
    let done = false;
    void run.then(() => (done = true));
    for (const answer of answers.splice(0, 9)) answer();
    await expect.poll(() => answered).toBe(9);
    expect(done).toBe(false);
    answers.splice(0).forEach((answer) => answer());
    expect(await run).toMatchObject({ arrivals: 10 });
    expect(answered).toBe(10);
  });

  it("never gives a user two requests at once: an arrival that finds every user busy waits, and its wait counts as lateness", async () => {
    const clock = manualClock();
    const pool = new UserPool(["a", "b"], seeded());
    const busy = new Set<string>();
    const lateness: number[] = [];
    const releases: (() => void)[] = [];
    const run = openLoop(arrivalTimes(1, 3), pool, async (user, lateMs) => {
      expect(busy.has(user)).toBe(false);
      busy.add(user);
      lateness.push(lateMs);
      await new Promise<void>((resolve) => releases.push(resolve));
      busy.delete(user);
    }, clock);
    await expect.poll(() => releases.length).toBe(1);
    clock.set(1_000);
    await expect.poll(() => releases.length).toBe(2);
    // The third arrival (at 2,000 ms) waits for a user; one is freed at 2,500 ms.
    clock.set(2_000);
    await Promise.resolve();
    expect(releases).toHaveLength(2);
    clock.set(2_500);
    releases.shift()!();
    await expect.poll(() => releases.length).toBe(2);
    expect(lateness).toEqual([0, 0, 500]);
    releases.splice(0).forEach((release) => release());
    expect(await run).toEqual({ arrivals: 3, maxLateMs: 500 });
    expect(pool.free).toBe(2);
  });

  it("takes --rate as requests a second; without it the load is a closed loop", () => {
    expect(options(["--rate", "40"]).rate).toBe(40);
    expect(options([]).rate).toBeNull();
  });
});

describe("the bench's CPU counters", () => {
  it("reads the command, process group and user + system ticks of a /proc stat line, a command with spaces too", () => {
    const line = "4242 (workerd serve) S 4000 3999 3999 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 9 0 100 1000 50";
    expect(parseStat(line)).toEqual({ comm: "workerd serve", pgrp: 3999, ticks: 325 });
    expect(parseStat("garbage")).toBeNull();
  });
});
