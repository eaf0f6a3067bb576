// Starts and stops a local plaudit (`npm start`, i.e. scripts/start.mjs) for
// the load generator and the crash test, the bench's direct server
// (bench/direct-server.ts, for the live scenario's --direct) and the bench's
// reference Workers: each on its own port with its own state folder (and
// plaudit with its own .dev.vars), so a run never meets a developer's data.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

export type ServerOptions = {
  /** Reuse this state folder (a restart after a crash); default: a fresh one. */
  stateDir?: string;
  /** The AUTH_SECRET; pass the previous one on a restart so issued tokens stay valid. */
  secret?: string;
  /** Vars written to the temporary .dev.vars, on top of AUTH_SECRET. */
  vars?: Record<string, string>;
  /** How long to wait for /healthz before giving up. */
  readyTimeoutMs?: number;
  /**
   * Environment of `npm start` on top of the defaults here: no cron runs and
   * no embedded central store (PLAUDIT_SCHEDULE, PLAUDIT_CENTRAL_STORE), so a
   * measurement or a crash check sees only the traffic it sends; set them to
   * run the whole system.
   */
  env?: Record<string, string>;
  /** Arguments for `wrangler dev` itself (scripts/start.mjs passes its own on), e.g. an inspector port. */
  wranglerArgs?: string[];
  /** Another checkout of plaudit to serve (its own scripts/start.mjs and code); default: this one. */
  root?: string;
};

/** A running local plaudit. `kill` and `stop` end its whole process group. */
export type LocalServer = {
  url: string;
  port: number;
  /** The process group's leader (and so the group id). */
  pid: number;
  secret: string;
  stateDir: string;
  /** Crash: SIGKILL to every process of the group (node, wrangler, workerd). */
  kill(): Promise<void>;
  /** Orderly stop: SIGTERM to the group, then SIGKILL if it lingers. */
  stop(): Promise<void>;
};

/** A port the OS reports free right now; the small race with other programs is accepted. */
export async function freePort(): Promise<number> {
  return await new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.unref();
    probe.on("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => (typeof address === "object" && address ? resolvePort(address.port) : reject(new Error("no port"))));
    });
  });
}

/** Where a server started here writes its output: server.log in its state folder. */
export function serverLogFile(stateDir: string): string {
  return join(stateDir, "server.log");
}

/** The last `lines` lines a server started here wrote, or undefined when it wrote nothing. */
export function serverLogTail(stateDir: string, lines: number): string | undefined {
  const file = serverLogFile(stateDir);
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  return text === "" ? undefined : text.split("\n").slice(-lines).join("\n");
}

export function freshStateDir(prefix = "plaudit-state-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Removes a state folder this module created (and the vars file inside it). */
export function removeStateDir(stateDir: string): void {
  rmSync(stateDir, { recursive: true, force: true });
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

async function waitForGroupExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (groupAlive(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

async function waitForHealth(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`plaudit exited before it was ready (code ${child.exitCode ?? child.signalCode})`);
    }
    try {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_000) });
      if (res.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`plaudit did not answer /healthz within ${timeoutMs} ms`);
}

/**
 * Starts `node scripts/start.mjs` detached, as the leader of its own process
 * group: wrangler dev spawns workerd children, and only a signal to the whole
 * group is sure to reach all of them. Output goes to server.log in the state
 * folder. Its inspector gets a port of its own unless the caller names one:
 * wrangler dev probes for the first free port from 9229, and two servers
 * starting side by side can both find 9229 free, and one then fails.
 */
export async function startServer(options: ServerOptions = {}): Promise<LocalServer> {
  const wranglerArgs = options.wranglerArgs ?? [];
  const inspector = wranglerArgs.includes("--inspector-port") ? [] : ["--inspector-port", String(await freePort())];
  return await startWith([join(options.root ?? root, "scripts", "start.mjs"), ...wranglerArgs, ...inspector], options);
}

/**
 * Starts the bench's direct server (bench/direct-server.ts) the same way: the
 * Worker's deploy bundle in one Miniflare, without `wrangler dev`'s proxy,
 * so a WebSocket costs its workerd about 1 file descriptor instead of the
 * proxy's about 6 and the Worker's workerd's 1 (see that file). Same
 * options, vars file and state folder layout as startServer.
 */
export async function startDirectServer(options: ServerOptions = {}): Promise<LocalServer> {
  return await startWith(["--import", "tsx", join(root, "bench", "direct-server.ts")], options);
}

async function startWith(nodeArgs: string[], options: ServerOptions): Promise<LocalServer> {
  const stateDir = options.stateDir ?? freshStateDir();
  const secret = options.secret ?? randomBytes(24).toString("hex");
  const devVars = join(stateDir, "bench.dev.vars");
  const vars = { AUTH_SECRET: secret, ...options.vars };
  writeFileSync(devVars, Object.entries(vars).map(([k, v]) => `${k}="${v}"\n`).join(""));
  return await onFreePort((port) =>
    launch(process.execPath, nodeArgs, {
      cwd: options.root ?? root,
      env: {
        PLAUDIT_SCHEDULE: "off",
        PLAUDIT_CENTRAL_STORE: "off",
        ...options.env,
        PLAUDIT_PORT: String(port),
        PLAUDIT_STATE_DIR: join(stateDir, "wrangler"),
        PLAUDIT_DEV_VARS: devVars,
      },
      port,
      secret,
      stateDir,
      // The migrations and wrangler's build before the first answer: on a busy 2-core machine that can outlast a minute.
      readyTimeoutMs: options.readyTimeoutMs ?? 180_000,
    }),
  );
}

/** Ports tried before a start that keeps finding its port taken fails. */
export const PORT_ATTEMPTS = 3;

/**
 * Runs `start` on a port that was free when chosen. A port is chosen free
 * and bound only later, by the server: in between another process (a
 * server starting beside it, a runtime's ephemeral port) can take it, so a
 * start that fails because its own port is taken is tried again on
 * another, up to PORT_ATTEMPTS ports. Any other failure fails at once.
 */
export async function onFreePort<T>(start: (port: number) => Promise<T>, choose: () => Promise<number> = freePort): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const port = await choose();
    try {
      return await start(port);
    } catch (error) {
      const taken = (error as Error).message.includes(`Address already in use (127.0.0.1:${port})`);
      if (!taken || attempt >= PORT_ATTEMPTS) throw error;
    }
  }
}

const wrangler = join(root, "node_modules", ".bin", "wrangler");
const quietWrangler = { CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" };

/**
 * Starts one of the reference Workers of bench/reference/ (`noop`, `feed`,
 * `like`, `front`, `contract`, `converging`, `pipeline` or `front-pipeline`) with `wrangler dev` on a spare port and
 * a fresh state folder, its D1 (when it has one) migrated like plaudit's.
 */
export async function startReference(name: string, secret: string): Promise<LocalServer> {
  const stateDir = freshStateDir(`plaudit-reference-${name}-`);
  const config = join(root, "bench", "reference", `${name}.toml`);
  const persist = join(stateDir, "wrangler");
  // A reference with a D1 database (feed, front, converging, pipeline, front-pipeline) gets plaudit's migrations.
  if (readFileSync(config, "utf8").includes("[[d1_databases]]")) {
    const migrate = spawnSync(wrangler, ["d1", "migrations", "apply", "DB", "--local", "--persist-to", persist, "-c", config], {
      cwd: root,
      env: { ...process.env, ...quietWrangler, CI: "true" },
      encoding: "utf8",
    });
    if (migrate.status !== 0) throw new Error(`migrating the ${name} reference failed: ${migrate.stderr}`);
  }
  return await onFreePort((port) => {
    const args = ["dev", "-c", config, "--ip", "127.0.0.1", "--port", String(port), "--persist-to", persist];
    args.push("--var", `AUTH_SECRET:${secret}`, "--log-level", "warn", "--show-interactive-dev-session=false");
    return launch(wrangler, args, { env: quietWrangler, port, secret, stateDir, readyTimeoutMs: 60_000 });
  });
}

type Launch = { cwd?: string; env: Record<string, string>; port: number; secret: string; stateDir: string; readyTimeoutMs: number };

/** Runs a server command as its own process group, logging to server.log, and waits for /healthz. */
async function launch(command: string, args: string[], options: Launch): Promise<LocalServer> {
  const { port, secret, stateDir } = options;
  const log = createWriteStream(serverLogFile(stateDir), { flags: "a" });
  const child = spawn(command, args, {
    cwd: options.cwd ?? root,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...options.env },
  });
  // One file for both streams, ended once both are: the first to end would otherwise end it for the other.
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
  const written = new Promise<void>((resolve) => {
    child.once("close", () => log.end(resolve));
    log.once("error", () => resolve());
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${command}`);
  const url = `http://127.0.0.1:${port}`;

  const kill = async () => {
    signalGroup(pid, "SIGKILL");
    await waitForGroupExit(pid, 5_000);
  };
  const stop = async () => {
    signalGroup(pid, "SIGTERM");
    if (!(await waitForGroupExit(pid, 5_000))) await kill();
  };
  try {
    await waitForHealth(url, child, options.readyTimeoutMs);
  } catch (error) {
    await kill();
    // Why it never answered is in its output, which goes with its state folder. A process
    // that outlived the kill may still hold the pipes: after 5 s its output so far is read.
    await Promise.race([written, new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
    throw new Error(`${(error as Error).message}\nIts output, last 100 lines:\n${serverLogTail(stateDir, 100) ?? "(none)"}`, { cause: error });
  }
  return { url, port, pid, secret, stateDir, kill, stop };
}
