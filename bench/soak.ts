// `npm run soak -- --minutes N`: see bench/lib/soak-run.ts for what it does
// and docs/benchmarks.md for a long run's figures. Exits non-zero unless
// every check after every kill was exact.
import { cpus, loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { freshStateDir, removeStateDir, type LocalServer } from "./lib/server";
import { soak } from "./lib/soak-run";
import { soakSummary, writeSoakReports } from "./lib/soak-report";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "60" },
    "kill-every": { type: "string", default: "5" },
    "reconcile-every": { type: "string", default: "60" },
    connections: { type: "string", default: "8" },
    users: { type: "string", default: "400" },
    items: { type: "string", default: "5000" },
    "hot-share": { type: "string", default: "0.2" },
    seed: { type: "string", default: "7" },
    out: { type: "string", default: join(root, "bench", "results") },
    help: { type: "boolean", default: false },
  },
});

if (values.help) {
  console.log(`npm run soak -- [--minutes 60] [--kill-every 5] [--reconcile-every 60] [--connections 8]
                    [--users 400] [--items 5000] [--hot-share 0.2] [--seed 7] [--out bench/results]
Runs the customer's traffic shape against a local plaudit with a central store,
SIGKILLs the server every --kill-every minutes, and checks every store after each kill.`);
  process.exit(0);
}

function number(name: string, value: string | undefined, min: number): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < min) {
    console.error(`--${name} must be a number >= ${min} (got ${value})`);
    process.exit(2);
  }
  return n;
}

const options = {
  minutes: number("minutes", values.minutes, 0.5),
  killEveryMinutes: number("kill-every", values["kill-every"], 0.25),
  reconcileEverySeconds: number("reconcile-every", values["reconcile-every"], 10),
  connections: number("connections", values.connections, 1),
  users: number("users", values.users, 2),
  items: number("items", values.items, 50),
  hotShare: number("hot-share", values["hot-share"], 0),
  seed: number("seed", values.seed, 0),
};
// Thresholds scaled for one machine: the viral item of each phase splits within seconds and cools within a minute.
const vars = {
  RATE_LIMIT_PER_MINUTE: "100000000",
  RATE_LIMIT_PER_DAY: "100000000",
  VIEW_RATE_LIMIT_PER_MINUTE: "100000000",
  SHARE_RATE_LIMIT_PER_MINUTE: "100000000",
  HOT_WRITES_PER_SEC: "8",
  HOT_WINDOW_SECONDS: "3",
  HOT_SHARDS: "4",
  COOL_WRITES_PER_SEC: "1",
  COOL_WINDOW_SECONDS: "30",
};

let server: LocalServer | null = null;
const stateDir = freshStateDir("plaudit-soak-");
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => void (server?.kill() ?? Promise.resolve()).finally(() => process.exit(130)));
}
const tty = process.stderr.isTTY;
const startedAt = new Date().toISOString();
const result = await soak({
  ...options,
  vars,
  stateDir,
  progress: (line) => process.stderr.write(tty ? `\r${line.padEnd(120)}` : `${line}\n`),
  onServer: (s) => (server = s),
});
if (tty) process.stderr.write("\n");
const report = {
  ...result,
  startedAt,
  options: { ...options, vars },
  environment: { cpus: cpus().length, node: process.version, loadAverageAtEnd: loadavg().map((n) => Math.round(n * 100) / 100) },
};
console.log(soakSummary(report));
const files = writeSoakReports(report, values.out!);
console.log(`reports: ${files.json}\n         ${files.html}`);
if (result.passed) removeStateDir(stateDir);
else console.error(`state and server.log kept in ${stateDir}`);
process.exitCode = result.passed ? 0 : 1;
