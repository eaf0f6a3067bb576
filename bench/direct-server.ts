// The bench's direct server: plaudit served by one Miniflare (one workerd),
// without `wrangler dev`'s proxy in front of it. Started by startDirectServer
// (bench/lib/server.ts) for `npm run bench -- --scenario live --direct`; not
// a way to develop (no reload, no cron trigger, no dev middleware).
//
// Why: under `wrangler dev` every request and WebSocket goes through the
// ProxyWorker, a second workerd that holds each socket's client connection,
// its loopback connection to the user Worker's workerd and 4 pipe
// descriptors (about 6.1 file descriptors a socket, measured in
// docs/live.md), so a hard open-files limit of 20,000 caps one `wrangler dev`
// at about 3,300 sockets. Here a socket costs the one workerd its client
// connection: about 1 descriptor.
//
// What it serves: the production bundle (`wrangler deploy --dry-run`), with
// the bindings that wrangler.toml gives `wrangler dev` (wrangler's own
// unstable_getMiniflareWorkerOptions: Durable Objects with SQLite, D1, the
// queues and their consumers, the rate limiters, the static assets), D1
// migrated by `wrangler d1 migrations apply --local` into the same state
// layout (`<state>/v3`). Listens on 127.0.0.1 only.
//
// Environment (as scripts/start.mjs): PLAUDIT_PORT, PLAUDIT_STATE_DIR (made
// if missing), PLAUDIT_DEV_VARS (the vars file, e.g. AUTH_SECRET). Runs until
// SIGTERM or SIGINT.
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare, type WorkerOptions } from "miniflare";
import wrangler from "wrangler";
// @ts-expect-error: a plain ES module shared with scripts/start.mjs
import { readDevVars } from "../scripts/dev-vars.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const port = Number(process.env.PLAUDIT_PORT ?? "8787");
const stateDir = resolve(root, process.env.PLAUDIT_STATE_DIR ?? ".wrangler/state-direct");
const devVars = resolve(root, process.env.PLAUDIT_DEV_VARS ?? ".dev.vars");
const config = join(root, "wrangler.toml");
const wranglerBin = join(root, "node_modules", ".bin", "wrangler");
const env = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false", CI: "true" };

function run(args: string[], what: string): void {
  const result = spawnSync(wranglerBin, args, { cwd: root, env, encoding: "utf8", timeout: 180_000 });
  if (result.status !== 0) {
    process.stderr.write(`${result.stdout ?? ""}${result.stderr ?? ""}`);
    throw new Error(`${what} failed (${result.status ?? result.signal ?? result.error?.message})`);
  }
}

mkdirSync(stateDir, { recursive: true });
// Every D1 binding gets the migrations, as `npm start` does.
const databases = [...readFileSync(config, "utf8").matchAll(/^binding = "(DB(?:_\d+)?)"$/gm)].map((m) => m[1]!);
for (const database of databases) {
  run(["d1", "migrations", "apply", database, "--local", "--persist-to", stateDir, "--env-file", devVars, "-c", config], `migrating ${database}`);
}
const bundleDir = join(stateDir, "bundle");
run(["deploy", "--dry-run", "--outdir", bundleDir, "-c", config], "bundling (wrangler deploy --dry-run)");

const fromConfig = wrangler.unstable_getMiniflareWorkerOptions(config, undefined, { envFiles: [devVars] } as Parameters<
  typeof wrangler.unstable_getMiniflareWorkerOptions
>[2]);
const { modulesRules: _rules, ...workerOptions } = fromConfig.workerOptions;
// The bundle's index.js imports its text modules (the pages, the chart
// library) by their emitted names, which wrangler.toml's globs do not match:
// list them explicitly.
const modules = readdirSync(bundleDir)
  .filter((file) => file !== "index.js" && !file.endsWith(".map") && file !== "README.md")
  .map((file) => ({ type: "Text" as const, path: join(bundleDir, file) }));
// Locally the Cache API tier is off unless the vars file sets it, as in scripts/start.mjs.
const bindings = { ...(workerOptions.bindings ?? {}) };
if (readDevVars(devVars).READ_CACHE_EDGE_TTL_MS === undefined) bindings.READ_CACHE_EDGE_TTL_MS = "0";

const worker = {
  ...workerOptions,
  name: "plaudit",
  bindings,
  modulesRoot: bundleDir,
  modules: [{ type: "ESModule" as const, path: join(bundleDir, "index.js") }, ...modules],
} as WorkerOptions;

const mf = new Miniflare({
  host: "127.0.0.1",
  port,
  defaultPersistRoot: join(stateDir, "v3"),
  workers: [worker],
});
const url = await mf.ready;
console.log(`plaudit (bench direct server, Miniflare without wrangler dev's proxy) on ${url.href} (state in ${stateDir})`);

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    void mf.dispose().finally(() => process.exit(0));
  });
}
