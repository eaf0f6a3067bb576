// Setup file of the files that start a whole server (vitest.config.ts,
// `node-servers` and `node-servers-alone`): they share their group's two
// worker slots with the typecheck. Two servers may run side by side, but the
// files of `node-servers-alone` run with no other (vitest.config.ts says
// why). Each file holds its server slots from before its first hook to after
// its last.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, vi } from "vitest";

/** One folder per slot and test run (vitest.config.ts names them after Vitest's process); whoever put it in place holds the slot. */
const base = process.env.PLAUDIT_SERVER_SLOTS!;
const SLOTS = 2;
/** A file running alone takes every slot; the others take one. */
const alone = process.env.PLAUDIT_SERVER_ALONE === "1";
const slots = Array.from({ length: SLOTS }, (_, i) => `${base}.${i}`);
const held: string[] = [];

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function readOr(path: string, fallback: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return fallback;
  }
}

/** Takes a slot: a folder holding the taker's pid, put in place by one rename, so a held slot always names its holder. */
function tryTake(slot: string): boolean {
  const mine = `${slot}.${process.pid}`;
  mkdirSync(mine, { recursive: true });
  writeFileSync(join(mine, "pid"), String(process.pid));
  try {
    renameSync(mine, slot);
    held.push(slot);
    return true;
  } catch {
    rmSync(mine, { recursive: true, force: true });
    // Held by a live file, or left by one whose process died holding it.
    const pid = Number(readOr(join(slot, "pid"), "0"));
    if (pid > 0 && !alive(pid)) release(slot);
    return false;
  }
}

/** Renamed aside before it is removed: a folder emptied in place could be taken by a waiter's rename, then removed under it. */
function release(slot: string): void {
  const aside = `${slot}.released.${process.pid}`;
  try {
    renameSync(slot, aside);
  } catch {
    return;
  }
  rmSync(aside, { recursive: true, force: true });
}

/** One more slot: any free one, or for a file running alone the next in order (always in order, so two such files cannot each hold half). */
function takeOne(): boolean {
  if (alone) return tryTake(slots[held.length]!);
  return slots.some((slot) => tryTake(slot));
}

// As long as the longest server files may take on a busy machine.
const WAIT_MS = 900_000;

beforeAll(async () => {
  const wanted = alone ? SLOTS : 1;
  await vi.waitFor(() => expect(held.length === wanted || (takeOne() && held.length === wanted)).toBe(true), { timeout: WAIT_MS, interval: 250 });
}, WAIT_MS);

afterAll(() => {
  for (const slot of held) if (readOr(join(slot, "pid"), "") === String(process.pid)) release(slot);
});
