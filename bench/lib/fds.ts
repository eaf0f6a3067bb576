// Open file descriptors per process of a process group (Linux /proc), so the
// live scenario can say what a socket costs each process: the open-files
// limit is per process, and locally it, not the hubs, caps the sockets.
import { readdirSync, readFileSync } from "node:fs";

export type ProcessFds = { pid: number; command: string; fds: number };

/** The processes of group `pgid` with their open descriptors; empty where /proc is not readable. */
export function groupFds(pgid: number): ProcessFds[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const found: ProcessFds[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Fields after "(comm)": state, ppid, pgrp, ...
      const pgrp = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
      if (pgrp !== pgid) continue;
      const argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").filter(Boolean);
      found.push({ pid: Number(entry), command: describe(argv), fds: readdirSync(`/proc/${entry}/fd`).length });
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found.sort((a, b) => a.pid - b.pid);
}

/** This process's open descriptors, or -1 where /proc is not readable. */
export function ownFds(): number {
  try {
    return readdirSync("/proc/self/fd").length;
  } catch {
    return -1;
  }
}

/** A short name for a process: workerd with its entry socket, else the program and its script. */
function describe(argv: readonly string[]): string {
  const program = argv[0]?.split("/").pop() ?? "?";
  if (program === "workerd") {
    const entry = argv.find((a) => a.startsWith("--socket-addr=entry="))?.slice("--socket-addr=entry=".length);
    return `workerd (entry ${entry ?? "?"})`;
  }
  const script = argv.slice(1).find((a) => !a.startsWith("-") && a.includes("/"));
  return script ? `${program} ${script.split("/").slice(-2).join("/")}` : program;
}
