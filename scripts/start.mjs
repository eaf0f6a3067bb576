#!/usr/bin/env node
// `npm start`: serves the whole system locally with `wrangler dev`, after
// applying D1 migrations and making sure an AUTH_SECRET exists.
//
// Environment:
//   PLAUDIT_PORT       port to listen on (default 8787)
//   PLAUDIT_STATE_DIR  where local state (objects, D1) persists (default .wrangler/state)
//   PLAUDIT_DEV_VARS   the .dev.vars file to use (default .dev.vars)
// Arguments after `--` go to `wrangler dev` unchanged.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { appendDevVar, readDevVars } from "./dev-vars.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const port = process.env.PLAUDIT_PORT ?? "8787";
const stateDir = resolve(root, process.env.PLAUDIT_STATE_DIR ?? ".wrangler/state");
const devVars = resolve(root, process.env.PLAUDIT_DEV_VARS ?? ".dev.vars");
const wrangler = join(root, "node_modules", ".bin", "wrangler");
const env = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" };

if (!readDevVars(devVars).AUTH_SECRET) {
  appendDevVar(devVars, "AUTH_SECRET", randomBytes(32).toString("hex"));
  console.log(`Created an AUTH_SECRET in ${devVars}. Mint a token with: npm run token -- <user_id> [--service]`);
}

// Every D1 binding in wrangler.toml gets the migrations (DB and the other count databases).
const databases = [...readFileSync(join(root, "wrangler.toml"), "utf8").matchAll(/^binding = "(DB(?:_\d+)?)"$/gm)].map((m) => m[1]);
for (const database of databases) {
  const migrate = spawnSync(
    wrangler,
    ["d1", "migrations", "apply", database, "--local", "--persist-to", stateDir, "--env-file", devVars],
    { cwd: root, env: { ...env, CI: "true" }, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" },
  );
  if (migrate.status !== 0) {
    process.stderr.write(migrate.stdout + migrate.stderr);
    console.error(`Applying D1 migrations to ${database} failed.`);
    process.exit(1);
  }
}

// Locally the Cache API is emulated on disk and costs more than the D1 query
// it would save, so `npm start` turns that tier off unless .dev.vars sets it;
// deployments keep it (shared/config.ts, docs/reads.md).
const localDefaults = readDevVars(devVars).READ_CACHE_EDGE_TTL_MS === undefined ? ["--var", "READ_CACHE_EDGE_TTL_MS:0"] : [];

const args = [
  "dev",
  "--ip", "127.0.0.1",
  "--port", port,
  "--persist-to", stateDir,
  "--env-file", devVars,
  "--log-level", "warn",
  "--test-scheduled",
  "--show-interactive-dev-session=false",
  ...localDefaults,
  ...process.argv.slice(2),
];
console.log(`plaudit on http://127.0.0.1:${port} (state in ${stateDir})`);
const child = spawn(wrangler, args, { cwd: root, env, stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
