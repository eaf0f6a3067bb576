// `npm run bench:profile -- [--seconds 20] [--warmup 5] [--connections 4] [--users 300] [--items 200]
//   [--serve-commit REV] [--save FILE] [--figure NAME]`:
// where a like's CPU goes in the Worker isolate, by part of plaudit. Starts a
// local plaudit (`npm start`, no central store, no schedule) with its
// inspector open, likes and unlikes from `--connections` closed-loop
// connections over the users and items for `--warmup` seconds (objects wake,
// caches fill), then takes a CPU profile of the isolate (every object of
// every class runs in it locally) for `--seconds`, and attributes each
// sampled millisecond to a part (bench/lib/profile-parts.ts). The table
// gives each part's milliseconds per request, its share of the isolate's
// busy time, the SQL and timers within it, and what the one-commit reference
// does of that work. `--serve-commit` profiles the plaudit of another commit
// (a temporary checkout of it, sharing this one's node_modules), with this
// commit's tool: a before and after of a change. `--save` keeps the profile
// itself (it opens in a browser's developer tools) and the modules of each
// part. Sampling costs CPU of its own, so the figures are a breakdown, not
// the cost of a like: `npm run bench -- --reference` measures that.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { currentCommit, machineNow, saveFigure, tableFigure, type FigureCell } from "./lib/figures";
import { HttpClient } from "./lib/http";
import { connectInspector } from "./lib/inspector";
import { answeredWithStatus, flipper, idRange, userTokens } from "./lib/plaudit";
import { attribute, moduleStarts, type CpuProfile } from "./lib/profile-parts";
import { freePort, removeStateDir, startServer } from "./lib/server";
import { wholeArgs } from "./lib/whole-args";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const USAGE =
  "npm run bench:profile -- [--seconds 20] [--warmup 5] [--connections 4] [--users 300] [--items 200] [--serve-commit REV] [--save FILE] [--figure NAME]";
const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "20" },
    warmup: { type: "string", default: "5" },
    connections: { type: "string", default: "4" },
    users: { type: "string", default: "300" },
    items: { type: "string", default: "200" },
    figure: { type: "string" },
    save: { type: "string" },
    "serve-commit": { type: "string" },
    help: { type: "boolean", default: false },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const whole = wholeArgs(values, USAGE);
const [seconds, warmup, connections, userCount, itemCount] = [whole("seconds", 1), whole("warmup", 0), whole("connections", 1), whole("users", 1), whole("items", 1)];
/** Microseconds between samples: fine enough for a like of a few milliseconds. */
const SAMPLE_INTERVAL_US = 200;
/**
 * The most a sample stands for: five intervals, past the sampler's own
 * delays (a busy isolate's deltas are 0.2 to 0.5 ms here). A longer delta
 * spans a time the thread ran no JavaScript: idle, blocked in a flush, or
 * waiting for a core.
 */
const MAX_SAMPLE_MS = (5 * SAMPLE_INTERVAL_US) / 1000;

const git = (...args: string[]) => execFileSync("git", args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

/** A temporary checkout of `rev` beside this one, sharing its node_modules. */
function checkoutOf(rev: string): { dir: string; commit: string; remove(): void } {
  let commit: string;
  try {
    commit = git("rev-parse", "--short", "--verify", `${rev}^{commit}`);
  } catch {
    console.error(`--serve-commit: no commit ${rev} in this repository\n${USAGE}`);
    process.exit(2);
  }
  const dir = mkdtempSync(join(tmpdir(), "plaudit-profile-checkout-"));
  git("worktree", "add", "--detach", dir, commit);
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
  return {
    dir,
    commit,
    remove() {
      git("worktree", "remove", "--force", dir);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const served = values["serve-commit"] === undefined ? null : checkoutOf(values["serve-commit"]);
const inspectorPort = await freePort();
const server = await startServer({
  vars: { RATE_LIMIT_PER_MINUTE: "100000000", RATE_LIMIT_PER_DAY: "100000000" },
  wranglerArgs: ["--inspector-port", String(inspectorPort)],
  ...(served ? { root: served.dir } : {}),
}).catch((error: unknown) => {
  served?.remove();
  throw error;
});
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () =>
    void server
      .kill()
      .then(() => served?.remove())
      .finally(() => process.exit(130)),
  );
}
const startedAt = new Date().toISOString();
const inspector = await connectInspector(inspectorPort);
// The proxy asks the runtime for a Network event per subrequest; nothing here reads them.
await inspector.send("Network.disable").catch(() => {});

const users = idRange(userCount);
const items = idRange(itemCount, 1_000_000n);
const tokens = await userTokens(users, server.secret);
const http = new HttpClient(server.url, connections);
const flip = flipper(http, tokens);
const random = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;
let answered = 0;
let errors = 0;
let stop = false;
const drivers = Array.from({ length: connections }, async () => {
  while (!stop) {
    if (answeredWithStatus(await flip(random(users), random(items)))) answered++;
    else errors++;
  }
});

process.stderr.write(`warming up for ${warmup} s: ${connections} connections, ${userCount} users, ${itemCount} items\n`);
await new Promise((r) => setTimeout(r, warmup * 1000));
await inspector.send("Profiler.enable");
await inspector.send("Profiler.setSamplingInterval", { interval: SAMPLE_INTERVAL_US });
await inspector.send("Profiler.start");
const before = { answered, errors };
process.stderr.write(`profiling for ${seconds} s\n`);
await new Promise((r) => setTimeout(r, seconds * 1000));
const { profile } = await inspector.send<{ profile: CpuProfile }>("Profiler.stop");
const requests = answered - before.answered;
const failed = errors - before.errors;
stop = true;
await Promise.all(drivers);

// The bundle each sampled script id names, read back from the runtime, for its module lines.
await inspector.send("Debugger.enable");
const bundles = new Map<string, { line: number; module: string }[]>();
for (const scriptId of new Set(profile.nodes.filter((n) => n.callFrame.url.endsWith(".js")).map((n) => n.callFrame.scriptId))) {
  const { scriptSource } = await inspector.send<{ scriptSource: string }>("Debugger.getScriptSource", { scriptId });
  const starts = moduleStarts(scriptSource);
  if (starts.length > 0) bundles.set(scriptId, starts);
}
await inspector.send("Debugger.disable");
inspector.close();
http.close();
await server.stop();
removeStateDir(server.stateDir);
served?.remove();

if (requests === 0) {
  console.error(`no request was answered while profiling (${failed} failed)`);
  process.exit(1);
}
const { busyMs, idleMs, parts, modules } = attribute(profile, bundles, MAX_SAMPLE_MS);
if (values.save) {
  writeFileSync(values.save, JSON.stringify(profile));
  writeFileSync(`${values.save}.modules.json`, JSON.stringify(modules, null, 1));
  console.log(`profile: ${values.save}; busy milliseconds by part and module: ${values.save}.modules.json`);
}
const perRequest = (ms: number) => ms / requests;
const rows: FigureCell[][] = parts.map((p) => [p.name, perRequest(p.ms), (100 * p.ms) / busyMs, perRequest(p.sqlMs), perRequest(p.timerMs), p.reference]);
rows.push(["all", perRequest(busyMs), 100, perRequest(parts.reduce((n, p) => n + p.sqlMs, 0)), perRequest(parts.reduce((n, p) => n + p.timerMs, 0)), ""]);

if (served) console.log(`plaudit served from commit ${served.commit}`);
console.log(`${requests} like and unlike requests answered in ${seconds} s of profile (${failed} failed); the isolate was busy ${((100 * busyMs) / (busyMs + idleMs)).toFixed(1)}% of it`);
console.log(["part", "ms/request", "% of busy", "SQL ms", "timers ms", "the reference"].join("\t"));
for (const row of rows) console.log(row.map((cell) => (typeof cell === "number" ? cell.toFixed(cell >= 10 ? 1 : 3) : cell)).join("\t"));
console.log(`${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)}`);

// A figure only from a run where every request was answered.
if (values.figure && failed === 0) {
  const report = tableFigure(
    values.figure,
    {
      script: "bench:profile",
      argv: process.argv.slice(2),
      // The commit served, when another, is in the command (--serve-commit).
      commit: currentCommit(root),
      startedAt,
      machine: machineNow(),
    },
    [
      { name: "part", align: "left" },
      { name: "ms per request", align: "right", decimals: 3 },
      { name: "% of busy", align: "right", decimals: 1 },
      { name: "of which SQL ms", align: "right", decimals: 3 },
      { name: "of which timers ms", align: "right", decimals: 3 },
      { name: "the one-commit reference", align: "left" },
    ],
    rows,
  );
  saveFigure(report);
}
process.exit(failed > 0 ? 1 : 0);
