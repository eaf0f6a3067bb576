// CPU time of a local server, from the operating system's own counters: the
// utime and stime of every workerd process in the server's process group
// (wrangler dev starts them as its children, so they share its group). A
// ratio of two such figures compares the work each server did, whatever
// else the shared machine ran meanwhile.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

const TICKS_PER_SECOND = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100;

/**
 * The `comm`, process group and CPU ticks (user + system) of one /proc/<pid>/stat
 * line; null for a line that is not one. `comm` is in parentheses and may hold spaces.
 */
export function parseStat(line: string): { comm: string; pgrp: number; ticks: number } | null {
  const open = line.indexOf("(");
  const close = line.lastIndexOf(")");
  if (open < 0 || close < open) return null;
  // After ")": state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime ...
  const fields = line.slice(close + 2).split(" ");
  const pgrp = Number(fields[2]);
  const ticks = Number(fields[11]) + Number(fields[12]);
  if (!Number.isFinite(pgrp) || !Number.isFinite(ticks)) return null;
  return { comm: line.slice(open + 1, close), pgrp, ticks };
}

/** The workerd processes of process group `group`, with their CPU ticks so far; null where /proc is missing. */
export function workerdProcesses(group: number): { pid: number; ticks: number }[] | null {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  const found: { pid: number; ticks: number }[] = [];
  for (const pid of pids) {
    let stat: ReturnType<typeof parseStat>;
    try {
      stat = parseStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
    } catch {
      continue; // The process ended meanwhile.
    }
    if (stat && stat.pgrp === group && stat.comm.startsWith("workerd")) found.push({ pid: Number(pid), ticks: stat.ticks });
  }
  return found;
}

/** CPU ms used so far by the workerd processes of process group `group`; null where /proc is missing. */
export function workerdCpuMs(group: number): number | null {
  const processes = workerdProcesses(group);
  if (processes === null) return null;
  return (processes.reduce((ticks, p) => ticks + p.ticks, 0) * 1000) / TICKS_PER_SECOND;
}
