// Runs the real `npm start` for the node tests, as its own process group,
// and tells what it left behind once stopped: the processes of the group and
// the ports they listened on.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { connect } from "node:net";
import { resolve } from "node:path";
import { expect, vi } from "vitest";
import { freePort } from "../../bench/lib/server";

export const root = resolve(import.meta.dirname, "../..");

export type NpmStart = { process: ChildProcess; group: number; output: () => string };

/**
 * Starts `npm start` with this environment and waits for its banner (the D1
 * databases copied or migrated, then wrangler dev: seconds alone, up to
 * minutes on a busy machine). Its inspector gets a port of its own:
 * wrangler dev probes for the first free port from 9229, and two servers
 * starting side by side can both find it free, and one then fails.
 */
export async function npmStart(env: NodeJS.ProcessEnv): Promise<NpmStart> {
  const inspector = await freePort();
  const child = spawn("npm", ["start", "--", "--inspector-port", String(inspector)], { cwd: root, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  const started = { process: child, group: child.pid!, output: () => output };
  try {
    await vi.waitFor(
      () => {
        if (child.exitCode !== null) throw new Error(`npm start exited: ${output}`);
        expect(output).toContain("state folder");
      },
      { timeout: 300_000, interval: 250 },
    );
  } catch (error) {
    killGroup(started);
    throw error;
  }
  return started;
}

/** The environment of an `npm start` on its own port, state folder and vars file, without a configured central store. */
export function startEnv(port: number, stateDir: string, devVars: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PLAUDIT_PORT: String(port), PLAUDIT_STATE_DIR: stateDir, PLAUDIT_DEV_VARS: devVars, ...extra };
  delete env.ALTERNATOR_ENDPOINT;
  return env;
}

export function groupAlive(group: number): boolean {
  try {
    process.kill(-group, 0);
    return true;
  } catch {
    return false;
  }
}

/** The end of a failed test: whatever is left of the group. */
export function killGroup(started: NpmStart | undefined): void {
  if (started && groupAlive(started.group)) process.kill(-started.group, "SIGKILL");
}

/** The processes of the group, with their command lines. */
export function groupProcesses(group: number): { pid: number; command: string }[] {
  return spawnSync("ps", ["-o", "pid=,args=", "-g", String(group)], { encoding: "utf8" })
    .stdout.trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [, pid, command] = /^\s*(\d+)\s+(.*)$/.exec(line)!;
      return { pid: Number(pid), command: command! };
    });
}

/** The TCP ports the processes of a group listen on (ss, Linux). */
export function listeningPorts(group: number): number[] {
  const pids = new Set(groupProcesses(group).map((p) => p.pid));
  const ports: number[] = [];
  for (const line of spawnSync("ss", ["-ltnpH"], { encoding: "utf8" }).stdout.split("\n")) {
    const port = /:(\d+)\s/.exec(line)?.[1];
    const owners = [...line.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1]));
    if (port && owners.some((pid) => pids.has(pid))) ports.push(Number(port));
  }
  return ports;
}

/** True once nothing listens on the port. */
export async function refused(port: number): Promise<boolean> {
  return await new Promise((done) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), done(false)));
    socket.once("error", () => done(true));
  });
}

/** Waits until the group has no process left and none of the ports is taken. */
export async function expectAllGone(group: number, ports: readonly number[]): Promise<void> {
  await vi.waitFor(() => expect(groupAlive(group)).toBe(false), { timeout: 30_000, interval: 100 });
  for (const port of ports) expect(await refused(port), `port ${port}`).toBe(true);
}
