// `npm run bench -- --scenario write|feed|mixed [options]`: a load generator
// that checks exactness as it goes. Each simulated user's requests are
// sequential, so every answer is checked against the exact expected state;
// after the run, counts must converge to the number of users who like each
// item. Exit code 1 on any wrong status or count (or errors above
// --max-error-rate), whatever the speed; 2 on bad options.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
// @ts-expect-error: a plain ES module shared with scripts/start.mjs
import { readDevVars } from "../scripts/dev-vars.mjs";
import { awaitConvergence, awaitOutboxesDrained, settleUndecided } from "./lib/checks";
import { costsBetween, costsTable, settledMetrics, watchIdle } from "./lib/write-costs";
import { HttpClient } from "./lib/http";
import { LikeModel } from "./lib/model";
import { hotItemShare, idRange, likeCounts, serviceToken, userTokens } from "./lib/plaudit";
import { Recorder } from "./lib/recorder";
import { summaryTable, writeReports, type Report } from "./lib/report";
import { removeStateDir, startServer, type LocalServer } from "./lib/server";
import { ItemPicker, seededRandom } from "./lib/zipf";
import type { Operation, RunContext } from "./scenarios/operations";
import { pick, SCENARIOS, seedLike } from "./scenarios/index";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

const USAGE = `usage: npm run bench -- [options]
  --scenario NAME        ${Object.keys(SCENARIOS).join(" | ")} (default write)
  --seconds N            timed phase length (default 20)
  --connections N        concurrent requests (default 16)
  --users N              simulated users, each sequential (default 200)
  --items N              items, Zipf-distributed (default 200)
  --hot-share F          share of writes that go to the one hot item (default 0.5)
  --zipf S               Zipf exponent of item popularity (default 1.0)
  --duplicate-share F    share of writes sent twice at once, as a racing retry (default 0.05)
  --seed-likes N         likes made before a read scenario's clock starts (default 500)
  --url URL              a running plaudit (default http://127.0.0.1:8787)
  --secret S             its AUTH_SECRET (default: $AUTH_SECRET, else .dev.vars)
  --start                start \`npm start\` on a spare port with a fresh state folder and raised rate limits; stop it after
  --var NAME=VALUE       with --start: a setting for the server (repeatable), e.g.
                         --var HOT_WRITES_PER_SEC=20 --var READ_CACHE_EDGE_TTL_MS=0
  --converge-seconds N   how long counts may take to converge after the run (default 60)
  --idle-seconds N       after the run, watch this long for work an idle system should not do (default 300; 0: skip)
  --max-error-rate F     errors (5xx, lost answers) allowed, as a share of requests (default 0)
  --random-seed N        seed of the generator's choices (default: random)
  --out DIR              where reports go (default bench/results)`;

function options() {
  const { values } = parseArgs({
    options: {
      scenario: { type: "string", default: "write" },
      seconds: { type: "string", default: "20" },
      connections: { type: "string", default: "16" },
      users: { type: "string", default: "200" },
      items: { type: "string", default: "200" },
      "hot-share": { type: "string", default: "0.5" },
      zipf: { type: "string", default: "1.0" },
      "duplicate-share": { type: "string", default: "0.05" },
      "seed-likes": { type: "string", default: "500" },
      url: { type: "string", default: "http://127.0.0.1:8787" },
      secret: { type: "string" },
      start: { type: "boolean", default: false },
      var: { type: "string", multiple: true, default: [] },
      "converge-seconds": { type: "string", default: "60" },
      "idle-seconds": { type: "string", default: "300" },
      "max-error-rate": { type: "string", default: "0" },
      "random-seed": { type: "string", default: String(Math.floor(Math.random() * 2 ** 31)) },
      out: { type: "string", default: join(root, "bench", "results") },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const num = (name: keyof typeof values, min: number, max = Infinity, integer = true) => {
    const n = Number(values[name]);
    if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
      console.error(`--${name} must be ${integer ? "a whole number" : "a number"} from ${min} to ${max}\n\n${USAGE}`);
      process.exit(2);
    }
    return n;
  };
  const scenario = SCENARIOS[values.scenario];
  if (!scenario) {
    console.error(`unknown scenario ${values.scenario}\n\n${USAGE}`);
    process.exit(2);
  }
  const opts = {
    scenario,
    seconds: num("seconds", 1, 3600),
    connections: num("connections", 1, 1024),
    users: num("users", 1, 1_000_000),
    items: num("items", 1, 10_000_000),
    hotShare: num("hot-share", 0, 1, false),
    zipf: num("zipf", 0, 10, false),
    duplicateShare: num("duplicate-share", 0, 1, false),
    seedLikes: num("seed-likes", 0, 1_000_000),
    convergeSeconds: num("converge-seconds", 1, 3600),
    idleSeconds: num("idle-seconds", 0, 3600),
    maxErrorRate: num("max-error-rate", 0, 1, false),
    randomSeed: num("random-seed", 0, 2 ** 32),
    url: values.url,
    secret: values.secret,
    start: values.start,
    vars: serverVars(values.var),
    out: resolve(values.out),
  };
  if (opts.users < opts.connections) {
    console.error("--users must be at least --connections: each connection drives its own users, one request at a time");
    process.exit(2);
  }
  return opts;
}

type Options = ReturnType<typeof options>;

function serverVars(pairs: readonly string[]): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const pair of pairs) {
    const match = pair.match(/^([A-Z][A-Z0-9_]*)=(.*)$/);
    if (!match) {
      console.error(`--var takes NAME=VALUE (an upper-case setting name), not ${JSON.stringify(pair)}\n\n${USAGE}`);
      process.exit(2);
    }
    vars[match[1]!] = match[2]!;
  }
  return vars;
}

function secretFor(opts: Options): string {
  const secret = opts.secret ?? process.env.AUTH_SECRET ?? readDevVars(resolve(process.env.PLAUDIT_DEV_VARS ?? ".dev.vars")).AUTH_SECRET;
  if (!secret) {
    console.error("No AUTH_SECRET: pass --secret, set AUTH_SECRET, or use --start.");
    process.exit(2);
  }
  return secret;
}

function environment(opts: Options, server: LocalServer | null) {
  const version = (pkg: string) => JSON.parse(readFileSync(join(root, "node_modules", pkg, "package.json"), "utf8")).version;
  const commit = spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).stdout.trim();
  return {
    target: server ? `npm start (wrangler dev) on ${server.url}, fresh state` : opts.url,
    node: process.version,
    wrangler: version("wrangler"),
    plaudit: commit || "unknown",
    cpus: `${cpus().length} x ${cpus()[0]?.model ?? "unknown"}`,
    loadAverageAtStart: loadavg().map((n) => Math.round(n * 100) / 100),
  };
}

/** One loop per connection, each owning its own users, so a user never has two requests in flight. */
async function runWorkers(
  ctx: RunContext,
  users: readonly string[],
  connections: number,
  next: (worker: number) => ((ctx: RunContext, user: string) => Promise<void>) | null,
): Promise<void> {
  await Promise.all(
    Array.from({ length: connections }, async (_, w) => {
      const mine = users.filter((_, i) => i % connections === w);
      for (let step = next(w); step; step = next(w)) {
        await step(ctx, mine[Math.floor(ctx.random() * mine.length)]!);
      }
    }),
  );
}

function progress(recorder: Recorder, seconds: number): () => void {
  if (!process.stderr.isTTY) return () => {};
  const timer = setInterval(() => {
    const elapsed = Math.floor((performance.now() - recorder.startedAt) / 1000);
    const { ops, p99 } = recorder.lastSecond();
    process.stderr.write(
      `\r[${elapsed}/${seconds}s] ${ops} ops/s  p99 ${p99.toFixed(1)} ms  errors ${recorder.errorCount()}  wrong ${recorder.violationCount}   `,
    );
  }, 1000);
  return () => {
    clearInterval(timer);
    process.stderr.write("\n");
  };
}

async function main(): Promise<number> {
  const opts = options();
  let server: LocalServer | null = null;
  let passed = false;
  const stopServer = async () => {
    const s = server;
    server = null;
    await s?.stop();
    // A failed run keeps its state folder (and server.log) to look into.
    if (s && passed) removeStateDir(s.stateDir);
    else if (s) console.error(`state and server.log kept in ${s.stateDir}`);
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => void stopServer().finally(() => process.exit(130)));
  }
  try {
    if (opts.start) {
      console.error("starting plaudit (npm start) with a fresh state folder...");
      server = await startServer({
        vars: { RATE_LIMIT_PER_MINUTE: "100000000", RATE_LIMIT_PER_DAY: "100000000", ...opts.vars },
      });
    }
    const url = server?.url ?? opts.url;
    const secret = server?.secret ?? secretFor(opts);
    const code = await run(opts, url, secret, environment(opts, server));
    passed = code === 0;
    return code;
  } finally {
    await stopServer();
  }
}

async function run(opts: Options, url: string, secret: string, env: Record<string, unknown>): Promise<number> {
  const random = seededRandom(opts.randomSeed);
  const users = idRange(opts.users);
  const items = idRange(opts.items, 100_000_000n);
  const tokens = await userTokens(users, secret);
  const http = new HttpClient(url, opts.connections);
  const health = await http.request("GET", "/healthz");
  if (health.status !== 200) {
    console.error(`plaudit at ${url} is not answering /healthz (${health.error ?? health.status})`);
    return 1;
  }
  const model = new LikeModel();
  const ctx: RunContext = {
    http,
    model,
    picker: new ItemPicker(items, opts.hotShare, opts.zipf, random),
    recorder: new Recorder(),
    tokens,
    random,
    duplicateShare: opts.duplicateShare,
    readsExact: false,
  };
  const { scenario } = opts;

  if (scenario.seedLikes && opts.seedLikes > 0) {
    console.error(`seeding ${opts.seedLikes} likes...`);
    let left = opts.seedLikes;
    await runWorkers(ctx, users, opts.connections, () => (left-- > 0 ? seedLike : null));
    const seeded = await settleAndConverge(ctx, tokens, opts.convergeSeconds);
    if (ctx.recorder.violationCount > 0 || !seeded.converged) {
      console.error(`seeding failed: ${ctx.recorder.violations.concat(JSON.stringify(seeded.mismatches.slice(0, 5))).join("\n")}`);
      return 1;
    }
  }

  if (scenario.mix.some((m) => m.op.kind === "read")) {
    // A cold item object costs tens of milliseconds locally: read every item
    // once first, so the clock measures reads of live objects.
    console.error(`warming up: reading all ${items.length} items once...`);
    const batches: string[][] = [];
    for (let i = 0; i < items.length; i += 50) batches.push(items.slice(i, i + 50));
    await runWorkers(ctx, users, opts.connections, () => {
      const batch = batches.pop();
      return batch ? async (c) => void (await likeCounts(c.http, batch)) : null;
    });
  }

  ctx.readsExact = scenario.mix.every((m) => m.op.kind === "read");
  console.error(`${scenario.name}: ${scenario.description}; ${opts.seconds} s, ${opts.connections} connections, ${opts.users} users, ${opts.items} items`);
  const service = await serviceToken(secret);
  const metricsBefore = await settledMetrics(http, service);
  const recorder = (ctx.recorder = new Recorder());
  const deadline = performance.now() + opts.seconds * 1000;
  const stopProgress = progress(recorder, opts.seconds);
  await runWorkers(ctx, users, opts.connections, () => {
    if (performance.now() >= deadline) return null;
    const op: Operation = pick(scenario.mix, random);
    return (c, user) => op.run(c, user);
  });
  stopProgress();
  const seconds = Math.max(opts.seconds, (performance.now() - recorder.startedAt) / 1000);

  console.error("waiting for counts to converge...");
  const convergence = await settleAndConverge(ctx, tokens, opts.convergeSeconds);
  const writers = [...new Set(model.items().flatMap((item) => model.usersOf(item)))];
  const outbox = writers.length > 0 ? await awaitOutboxesDrained(http, await serviceToken(secret), writers, opts.convergeSeconds * 1000) : null;
  const hotItem = model.items().includes(ctx.picker.hot) ? await hotItemShare(http, service, ctx.picker.hot) : null;
  const costs = costsBetween(metricsBefore, await settledMetrics(http, service));
  if (opts.idleSeconds > 0) console.error(`watching the idle system for ${opts.idleSeconds} s...`);
  const idle = opts.idleSeconds > 0 ? await watchIdle(http, service, opts.idleSeconds) : null;
  http.close();

  const summary = recorder.summary(seconds);
  const requests = summary.total.count + summary.total.errors + summary.total.rejected;
  const errorRate = requests === 0 ? 0 : summary.total.errors / requests;
  const passed =
    recorder.violationCount === 0 && convergence.converged && convergence.negatives.length === 0 &&
    (outbox?.drained ?? true) && errorRate <= opts.maxErrorRate && summary.total.count > 0;
  const report: Report = {
    scenario: scenario.name,
    description: scenario.description,
    passed,
    startedAt: new Date(Date.now() - seconds * 1000).toISOString(),
    seconds: Math.round(seconds * 10) / 10,
    options: { ...opts, scenario: scenario.name, secret: undefined },
    environment: { ...env, loadAverageAtEnd: loadavg().map((n) => Math.round(n * 100) / 100) },
    summary,
    checks: {
      violationCount: recorder.violationCount,
      violations: recorder.violations,
      errorRate,
      errorSamples: recorder.errorSamples,
      converged: convergence.converged,
      convergenceMs: convergence.ms,
      mismatches: convergence.mismatches.slice(0, 50),
      negatives: convergence.negatives,
      itemsChecked: model.items().length,
      outboxesDrained: outbox ? outbox.drained : null,
    },
    hotItem,
    costs,
    idle,
  };
  console.log(summaryTable(report));
  console.log(costsTable(costs, idle));
  if (hotItem) {
    console.log(
      `hot item ${hotItem.item}: ${hotItem.hot ? `split into ${hotItem.shards} children` : "not split"}; ` +
        `the head served ${hotItem.headApplies} of ${hotItem.writes} write calls (${(hotItem.headShare * 100).toFixed(1)} %) ` +
        `and made ${hotItem.headCommits} commits (${(hotItem.headCommits / seconds).toFixed(1)} a second over the run)`,
    );
  }
  for (const v of recorder.violations.slice(0, 10)) console.log(`  wrong: ${v}`);
  for (const m of convergence.mismatches.slice(0, 10)) console.log(`  wrong count: item ${m.item} is ${m.got}, expected ${m.expected}`);
  for (const e of recorder.errorSamples.slice(0, 5)) console.log(`  error: ${e}`);
  if (summary.total.rejected > 0) console.log(`  ${summary.total.rejected} requests were rate limited (429): use --start, or raise RATE_LIMIT_PER_MINUTE / RATE_LIMIT_PER_DAY`);
  const files = writeReports(report, opts.out);
  console.log(`reports: ${files.json}\n         ${files.html}`);
  return passed ? 0 : 1;
}

/** Settles undecided edges with has_liked, then waits until every touched item's count is exact. */
async function settleAndConverge(ctx: RunContext, tokens: ReadonlyMap<string, string>, seconds: number) {
  for (const why of await settleUndecided(ctx.http, ctx.model, tokens)) ctx.recorder.violation(why);
  return await awaitConvergence(ctx.http, ctx.model, seconds * 1000);
}

process.exitCode = await main();
