// The process tree of `npm start`, so stopping it ends every process it
// started (wrangler's workerd included) and frees every port they took.
import { spawnSync } from "node:child_process";

/** Every living descendant of `pid`, deepest first. */
export function descendants(pid) {
  const ps = spawnSync("ps", ["-A", "-o", "pid=,ppid="], { encoding: "utf8" });
  const children = new Map();
  for (const line of (ps.stdout ?? "").trim().split("\n")) {
    const [child, parent] = line.trim().split(/\s+/).map(Number);
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(child);
  }
  const found = [];
  const walk = (parent) => {
    for (const child of children.get(parent) ?? []) {
      walk(child);
      found.push(child);
    }
  };
  walk(pid);
  return found;
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function signal(pid, name) {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

/** SIGTERM to each, then SIGKILL to any still alive after `graceMs`. */
export async function endAll(pids, graceMs = 5_000) {
  const unique = [...new Set(pids)].filter((pid) => pid !== process.pid);
  for (const pid of unique) signal(pid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (unique.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  for (const pid of unique.filter(alive)) signal(pid, "SIGKILL");
}
