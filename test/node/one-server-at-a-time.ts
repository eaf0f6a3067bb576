// Setup file of the files that start a whole server (vitest.config.ts,
// `node-servers`): they share their group's two worker slots with the
// typecheck, but never run two at once (vitest.config.ts says why), so each
// file holds a lock from before its first hook to after its last.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, vi } from "vitest";

/** One folder per test run (vitest.config.ts names it after Vitest's process); whoever put it in place holds the lock. */
const lock = process.env.PLAUDIT_SERVER_LOCK!;
const holder = join(lock, "pid");

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

/** Takes the lock: a folder holding the taker's pid, put in place by one rename, so a held lock always names its holder. */
function tryLock(): boolean {
  const mine = `${lock}.${process.pid}`;
  mkdirSync(mine, { recursive: true });
  writeFileSync(join(mine, "pid"), String(process.pid));
  try {
    renameSync(mine, lock);
    return true;
  } catch {
    rmSync(mine, { recursive: true, force: true });
    // Held by a live file, or left by one whose process died holding it.
    const pid = Number(readOr(holder, "0"));
    if (pid > 0 && !alive(pid)) release();
    return false;
  }
}

/** Renamed aside before it is removed: a folder emptied in place could be taken by a waiter's rename, then removed under it. */
function release(): void {
  const aside = `${lock}.released.${process.pid}`;
  try {
    renameSync(lock, aside);
  } catch {
    return;
  }
  rmSync(aside, { recursive: true, force: true });
}

// As long as the longest server file may take on a busy machine.
const WAIT_MS = 900_000;

beforeAll(async () => {
  await vi.waitFor(() => expect(tryLock()).toBe(true), { timeout: WAIT_MS, interval: 250 });
}, WAIT_MS);

afterAll(() => {
  if (readOr(holder, "") === String(process.pid)) release();
});
