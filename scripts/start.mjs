#!/usr/bin/env node
// `npm start`: the whole system locally, nothing else to start. Applies the
// D1 migrations the state folder lacks (or copies databases migrated from the
// same files into a fresh one), makes sure an AUTH_SECRET exists,
// starts the embedded central store (scripts/central-store.mjs) unless one
// is configured, serves the Worker with `wrangler dev`, and fires
// wrangler.toml's cron schedule (scripts/schedule.mjs). Stopping it (Ctrl-C,
// SIGTERM) or a crash of either server stops the other and every process
// they started.
//
// Environment:
//   PLAUDIT_PORT           port to listen on (default 8787)
//   PLAUDIT_STATE_DIR      where local state (objects, D1, the central store) persists (default .wrangler/state)
//   PLAUDIT_DEV_VARS       the .dev.vars file to use (default .dev.vars)
//   PLAUDIT_SCHEDULE       `off`: no cron runs (tests that call /__scheduled themselves);
//                          `<n>s`: every cron every n seconds instead of at its times (default: at its times)
//   PLAUDIT_CENTRAL_STORE  `off`: no embedded central store (likers, export and the central rebuild are off)
//   PLAUDIT_LOG_LEVEL      what `wrangler dev` prints: debug, info, log, warn (default), error or none;
//                          `info` adds each request, each queue batch and the Worker's info lines
//   ALTERNATOR_ENDPOINT    (environment or .dev.vars) a real central store: the embedded one is not started
// Arguments after `--` go to `wrangler dev` unchanged.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnCentralStore } from "./central-store-process.mjs";
import { appendDevVar, readDevVars } from "./dev-vars.mjs";
import { prepareDatabases } from "./local-d1.mjs";
import { descendants, endAll } from "./processes.mjs";
import { readCrons, runSchedule } from "./schedule.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const port = process.env.PLAUDIT_PORT ?? "8787";
const stateDir = resolve(root, process.env.PLAUDIT_STATE_DIR ?? ".wrangler/state");
const devVars = resolve(root, process.env.PLAUDIT_DEV_VARS ?? ".dev.vars");
const wrangler = join(root, "node_modules", ".bin", "wrangler");
const env = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" };
const toml = readFileSync(join(root, "wrangler.toml"), "utf8");
const url = `http://127.0.0.1:${port}`;
/** Where `npm run export` finds the embedded central store while it runs. */
const endpointFile = join(stateDir, "central-store.url");
const children = [];
let stopping = false;
let stopSchedule = () => {};
let knownDescendants = [];
let worker;

const schedule = process.env.PLAUDIT_SCHEDULE ?? "on";
if (!/^(on|off|\d+s)$/.test(schedule)) await fail(`PLAUDIT_SCHEDULE is "on", "off" or a number of seconds like "10s", not "${schedule}".`);
const LOG_LEVELS = ["debug", "info", "log", "warn", "error", "none"];
const logLevel = process.env.PLAUDIT_LOG_LEVEL ?? "warn";
if (!LOG_LEVELS.includes(logLevel)) await fail(`PLAUDIT_LOG_LEVEL is one of ${LOG_LEVELS.join(", ")}, not "${logLevel}".`);

if (!readDevVars(devVars).AUTH_SECRET) {
  appendDevVar(devVars, "AUTH_SECRET", randomBytes(32).toString("hex"));
  console.log(`Created an AUTH_SECRET in ${devVars}. Mint a token with: npm run token -- <user_id> [--service]`);
}

// Every D1 binding in wrangler.toml gets the migrations (DB and the other count databases),
// unless this state folder was migrated from the same files already (a restart), or is
// fresh and a copy of databases migrated from them exists (scripts/local-d1.mjs).
const migrationsFailed = prepareDatabases(root, stateDir, env);
if (migrationsFailed !== null) {
  process.stderr.write(migrationsFailed);
  await fail("Applying the D1 migrations failed.");
}

/** Stops every server and whatever they started, then exits; used by signals and by a server's crash alike. */
async function shutdown(code) {
  if (stopping) return;
  stopping = true;
  stopSchedule();
  rmSync(endpointFile, { force: true });
  // Taken before any signal: a process whose parent has exited can no longer be found from here.
  // Once wrangler is gone its workerd can only be found in the list taken at start (a pid that old
  // may since name another process, so that list serves only then).
  const wranglerGone = worker !== undefined && (worker.exitCode !== null || worker.signalCode !== null);
  await endAll([...descendants(process.pid), ...(wranglerGone ? knownDescendants : [])]);
  process.exit(code);
}
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => void shutdown(0));
// `npm start` runs this under npm and a shell, and a SIGTERM to npm ends
// those two only: a new parent means whoever started it is gone, so stop.
// Its output may be gone with it: a write that fails must not end this process before it stopped the others.
for (const stream of [process.stdout, process.stderr]) stream.on("error", () => {});
const parent = process.ppid;
setInterval(() => process.ppid !== parent && void shutdown(0), 250).unref();

const vars = readDevVars(devVars);
const configured = process.env.ALTERNATOR_ENDPOINT || vars.ALTERNATOR_ENDPOINT;
let centralStore = configured ? `${configured} (configured)` : "off (PLAUDIT_CENTRAL_STORE=off)";
const extraVars = [];
if (process.env.ALTERNATOR_ENDPOINT) extraVars.push("--var", `ALTERNATOR_ENDPOINT:${process.env.ALTERNATOR_ENDPOINT}`);
if (!configured && process.env.PLAUDIT_CENTRAL_STORE !== "off") {
  const endpoint = await startCentralStore(join(stateDir, "central-store"));
  writeFileSync(endpointFile, `${endpoint}\n`);
  centralStore = `${endpoint} (embedded, data in ${join(stateDir, "central-store")})`;
  extraVars.push("--var", `ALTERNATOR_ENDPOINT:${endpoint}`);
}

// Locally the Cache API is emulated on disk and costs more than the D1 query
// it would save, so `npm start` turns that tier off unless .dev.vars sets it;
// deployments keep it (shared/config.ts, docs/reads.md).
if (vars.READ_CACHE_EDGE_TTL_MS === undefined) extraVars.push("--var", "READ_CACHE_EDGE_TTL_MS:0");

const args = [
  "dev",
  "--ip", "127.0.0.1",
  "--port", port,
  "--persist-to", stateDir,
  "--env-file", devVars,
  "--log-level", logLevel,
  "--test-scheduled",
  "--show-interactive-dev-session=false",
  ...extraVars,
  ...process.argv.slice(2),
];
worker = spawn(wrangler, args, { cwd: root, env, stdio: ["ignore", "inherit", "inherit"] });
children.push(worker);
worker.on("exit", (code, signal) => {
  if (!stopping) console.error(`wrangler dev exited (${code ?? signal}); stopping everything.`);
  void shutdown(code ?? 1);
});

await waitForHealth();
knownDescendants = descendants(process.pid);
const crons = readCrons(toml);
const scheduleLine =
  schedule === "off" || crons.length === 0
    ? "off"
    : `${crons.join(", ")} (UTC)${schedule === "on" ? "" : `, fired every ${schedule} (PLAUDIT_SCHEDULE)`}`;
if (schedule !== "off") stopSchedule = runSchedule(crons, fireCron, schedule === "on" ? undefined : Number.parseInt(schedule, 10));
console.log(
  [
    "",
    `plaudit is running (stop it with Ctrl-C):`,
    `  API            ${url}/v1/...  (a token: npm run token -- <user_id>)`,
    `  API reference  ${url}/docs`,
    `  dashboard      ${url}/dashboard  (a service token: npm run token -- 1 --service)`,
    `  live page      ${url}/live`,
    `  like button    ${url}/demo/  (a feed of 50 buttons)`,
    `  metrics        ${url}/metrics  (with a service token)`,
    `  central store  ${centralStore}`,
    `  schedule       ${scheduleLine}`,
    `  state folder   ${stateDir}`,
    "",
  ].join("\n"),
);

async function startCentralStore(folder) {
  const { store, endpoint } = spawnCentralStore(folder);
  children.push(store);
  const url = await endpoint.catch((error) => fail(`The embedded ${error.message}`));
  store.on("exit", (code, signal) => {
    if (!stopping) console.error(`The embedded central store exited (${code ?? signal}); stopping everything.`);
    void shutdown(code ?? 1);
  });
  return url;
}

async function waitForHealth() {
  for (;;) {
    try {
      if ((await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_000) })).ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function fireCron(cron) {
  try {
    const res = await fetch(`${url}/__scheduled?cron=${encodeURIComponent(cron)}`, { signal: AbortSignal.timeout(300_000) });
    if (!res.ok) console.error(`The scheduled run "${cron}" answered ${res.status}.`);
  } catch (error) {
    if (!stopping) console.error(`The scheduled run "${cron}" failed: ${error}`);
  }
}

function fail(message) {
  console.error(message);
  if (children.length > 0) void shutdown(1);
  else process.exit(1);
  return new Promise(() => {});
}
