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
// @ts-expect-error: a plain ES module shared with scripts/start.mjs
import { readDevVars } from "../scripts/dev-vars.mjs";
import { awaitConvergence, awaitOutboxesDrained, settleUndecided } from "./lib/checks";
import { HttpClient } from "./lib/http";
import { LikeModel } from "./lib/model";
import { hotItemShare, idRange, serviceToken, userTokens } from "./lib/plaudit";
import { Recorder } from "./lib/recorder";
import { costsFigure, figureRefusal, currentCommit, machineNow, referenceFigure, runFigure, saveFigure, tableFigure } from "./lib/figures";
import { summaryTable, writeReports, type Report } from "./lib/report";
import { removeStateDir, startServer, type LocalServer } from "./lib/server";
import { ItemPicker, seededRandom } from "./lib/zipf";
import { feedRead, showEveryItem, type RunContext } from "./scenarios/operations";
import { ItemSights } from "./lib/sights";
import { config } from "../shared/config";
import { seedLike } from "./scenarios/index";
import { diff, plus, readCosts, perRequest, ZERO_COSTS, type ReadCosts } from "./lib/costs";
import { probeLag } from "./lib/lag";
import { runWorkers, timedPhase } from "./lib/phase";
import { behindRows, flushRows, nativeRows, phaseSummary, PLAUDIT, pooledRows, referenceContenders, referenceRows, referenceTable, runRounds, startReferences, yardstickRows, type Contender, type ReferenceComparison, type StartedReference } from "./lib/reference";
import { NativeSampler } from "./lib/native";
import { isScenarioRun, options, type Options } from "./options";
import { awaitQuiet, costsBetween, costsTable, delta, scrapeMetrics, settledMetrics, untilSwept, watchIdle } from "./lib/write-costs";
import { workerdCpuMs } from "./lib/cpu";
import { runLiveBench } from "./scenarios/live";
import { runViralBench } from "./scenarios/viral";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Longer than the server's own-write pin (workers/reads/count-reader.ts), so feed reads come from the store. */
const OWN_WRITE_LAPSE_MS = 11_000;

/** Connections used to seed likes before a read scenario's clock. */
const SEED_CONNECTIONS = 8;
/** Length of the off-the-clock phase that measures the store's lag under load. */
const LAG_PHASE_SECONDS = 10;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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

async function main(): Promise<number> {
  const opts = options();
  let server: LocalServer | null = null;
  const references: StartedReference[] = [];
  let passed = false;
  const stopServers = async () => {
    const s = server;
    server = null;
    const refs = references.splice(0);
    await Promise.all([s?.stop(), ...refs.map((r) => r.server.stop())]);
    // The references' answers are not checked: their state has nothing to look into.
    for (const r of refs) removeStateDir(r.server.stateDir);
    // A failed run keeps its state folder (and server.log) to look into.
    if (s && passed) removeStateDir(s.stateDir);
    else if (s) console.error(`state and server.log kept in ${s.stateDir}`);
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => void stopServers().finally(() => process.exit(130)));
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
    // Started once, before any load, and kept up for the whole run: the rounds take turns on running servers.
    if (opts.reference) await startReferences(opts.references, secret, references);
    const code = await run(opts, url, secret, environment(opts, server), references, server?.pid ?? null);
    passed = code === 0;
    return code;
  } finally {
    await stopServers();
  }
}

async function run(
  opts: Options,
  url: string,
  secret: string,
  env: Record<string, unknown>,
  references: readonly StartedReference[],
  serverPid: number | null,
): Promise<number> {
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
    // The server's own setting: the bench's --var values over the defaults.
    sights: new ItemSights(config(opts.vars).PRIVACY_STALE_MS),
  };
  const { scenario } = opts;

  if (scenario.seedLikes && opts.seedLikes > 0) {
    console.error(`seeding ${opts.seedLikes} likes...`);
    let left = opts.seedLikes;
    // Seeding is not measured: a few connections keep the pipeline's backlog, and the wait for it, short.
    await runWorkers(ctx, users, Math.min(opts.connections, SEED_CONNECTIONS), () => (left-- > 0 ? seedLike : null));
    const seeded = await settleAndConverge(ctx, tokens, opts.convergeSeconds);
    // The seeding's sweeps are its own work, not the measured phase's.
    await untilSwept(Date.now());
    if (ctx.recorder.violationCount > 0 || !seeded.converged) {
      console.error(`seeding failed: ${ctx.recorder.violations.concat(JSON.stringify(seeded.mismatches.slice(0, 5))).join("\n")}`);
      return 1;
    }
  }

  ctx.readsExact = scenario.mix.every((m) => m.op.kind === "read");
  if (ctx.readsExact && scenario.seedLikes) {
    // Reads must now come from the store, not from the own-write values the
    // seeding left in the server's memory: let those lapse, then check again.
    console.error("waiting for the seeded likes' own-write values to lapse...");
    await sleep(OWN_WRITE_LAPSE_MS);
    const stored = await awaitConvergence(http, model, opts.convergeSeconds * 1000);
    if (!stored.converged) {
      console.error(`the store did not converge after seeding: ${JSON.stringify(stored.mismatches.slice(0, 5))}`);
      return 1;
    }
  }
  console.error(`${scenario.name}: ${scenario.description}; ${opts.seconds} s, ${opts.connections} connections, ${opts.users} users, ${opts.items} items`);
  const service = await serviceToken(secret);
  const metricsBefore = await settledMetrics(http, service);
  const costsBefore = await readCosts(http, service);
  const startedAt = new Date().toISOString();
  const { recorder, warmUps, seconds, onClock, reference, prepared, criticalPath } = await clock(ctx, users, items, opts, service, references, serverPid, Number(new URL(url).port));
  // Over every plaudit phase: the reference phases between them send plaudit nothing, and --feed-first's feeds are taken out.
  const feeds = recorder.summary(seconds).perOp[feedRead.name]?.count ?? 0;
  const costs = perRequest(plus(costsBefore, prepared), await readCosts(http, service), feeds);

  // The store's lag, under the same load again but off the clock: the probe's
  // likes would otherwise add writes to a read scenario's measured phase.
  console.error(`measuring the store's lag under the same load for ${LAG_PHASE_SECONDS} s...`);
  const probeToken = (await userTokens(idRange(1, 900_000_000n), secret)).values().next().value!;
  let probeItem = BigInt(idRange(1, 800_000_000n)[0]!);
  let lagPhaseDone = false;
  const lagging = probeLag(http, probeToken, () => String(++probeItem), () => lagPhaseDone);
  const lagPhase = await timedPhase(ctx, users, scenario, { ...opts, seconds: LAG_PHASE_SECONDS });
  lagPhaseDone = true;
  const lag = await lagging;
  recorder.absorbViolations(lagPhase.recorder);
  recorder.absorbViolations(warmUps);
  ctx.recorder = recorder;

  console.error("waiting for counts to converge...");
  const convergence = await settleAndConverge(ctx, tokens, opts.convergeSeconds);
  // The last writes: the lag probe's, and any undecided request settled above.
  const lastWriteAt = Date.now();
  const writers = [...new Set(model.items().flatMap((item) => model.usersOf(item)))];
  const outbox = writers.length > 0 ? await awaitOutboxesDrained(http, service, writers, opts.convergeSeconds * 1000) : null;
  const hotItem = model.items().includes(ctx.picker.hot) ? await hotItemShare(http, service, ctx.picker.hot) : null;
  await untilSwept(lastWriteAt);
  const writeCosts = costsBetween(metricsBefore, await settledMetrics(http, service));
  if (opts.idleSeconds > 0) console.error(`watching the idle system for ${opts.idleSeconds} s...`);
  const idle = opts.idleSeconds > 0 ? await watchIdle(http, service, opts.idleSeconds) : null;
  http.close();
  const summary = recorder.summary(seconds);

  const requests = summary.total.count + summary.total.errors + summary.total.rejected;
  const errorRate = requests === 0 ? 0 : summary.total.errors / requests;
  const warm = warmUps.summary(1).total;
  const warmRequests = warm.count + warm.errors + warm.rejected;
  const warmUpErrorRate = warmRequests === 0 ? 0 : warm.errors / warmRequests;
  const passed =
    recorder.violationCount === 0 && convergence.converged && convergence.negatives.length === 0 &&
    (outbox?.drained ?? true) && errorRate <= opts.maxErrorRate && warmUpErrorRate <= opts.maxErrorRate && summary.total.count > 0;
  const report: Report = {
    scenario: scenario.name,
    description: scenario.description,
    passed,
    startedAt,
    seconds: Math.round(seconds * 10) / 10,
    options: { ...opts, scenario: scenario.name, secret: undefined },
    environment: { ...env, loadAverageAtEnd: loadavg().map((n) => Math.round(n * 100) / 100) },
    summary,
    checks: {
      violationCount: recorder.violationCount,
      violations: recorder.violations,
      errorRate,
      errorSamples: recorder.errorSamples,
      ...(warmRequests > 0 ? { warmUp: { requests: warmRequests, errors: warm.errors, errorRate: warmUpErrorRate, errorSamples: warmUps.errorSamples } } : {}),
      converged: convergence.converged,
      convergenceMs: convergence.ms,
      mismatches: convergence.mismatches.slice(0, 50),
      negatives: convergence.negatives,
      itemsChecked: model.items().length,
      outboxesDrained: outbox ? outbox.drained : null,
    },
    hotItem: hotItem && { ...hotItem, headCommitsOnClock: onClock.commits, headAppliesOnClock: onClock.applies, writesOnClock: onClock.writes },
    readCosts: costs,
    storeLag: lag,
    reference,
    costs: writeCosts,
    idle,
    criticalPath,
  };
  if (reference) console.log(`plaudit, all ${opts.rounds} rounds together:`);
  console.log(summaryTable(report));
  // A read scenario's only likes are the lag probe's: a per-like figure from them would mislead.
  // With --reference the deltas span every round of plaudit's: say so, beside the figures.
  const span = reference ? ` (over all ${opts.rounds} of plaudit's timed phases)` : "";
  if (scenario.mix.some((m) => m.op.kind === "write")) {
    console.log(costsTable(writeCosts, idle, true));
    const warmed = opts.warmUp > 0 ? " and their warm-ups" : "";
    if (reference) console.log(`  per-like costs over all ${opts.rounds} of plaudit's timed phases${warmed}, the lag phase and the convergence`);
  }
  if (hotItem) {
    console.log(
      `hot item ${hotItem.item}: ${hotItem.hot ? `split into ${hotItem.shards} children` : "not split"}; ` +
        `on the clock the head served ${onClock.applies} of ${onClock.writes} write calls (${(onClock.writes === 0 ? 0 : (onClock.applies / onClock.writes) * 100).toFixed(1)} %) ` +
        `and made ${onClock.commits} commits (${(onClock.commits / seconds).toFixed(1)} a second)`,
    );
  }
  if (criticalPath.likeRequests > 0) {
    console.log(
      `critical path, ${criticalPath.fromStart ? "from the start" : "from the second second on"} of ${criticalPath.phases} phases: ${criticalPath.queries} D1 queries a write's answer waited for, ` +
        `over ${criticalPath.likeRequests} like and unlike requests (${criticalPath.per100} per 100); ` +
        `${criticalPath.firstSights} of the items those phases named were ones the isolate had not met within PRIVACY_STALE_MS, ` +
        `each a settings read before its first answer: a floor of ${criticalPath.floorPer100} per 100`,
    );
  }
  if (costs) console.log(`read routes, per ${scenario.name === "feed" ? "feed" : "request"}${span}: ${costs.objectCalls} object calls, ${costs.d1Queries} D1 queries, ${costs.d1RowsRead} D1 rows read`);
  console.log(`store lag after a like (under this load): p50 ${lag.p50} ms, p99 ${lag.p99} ms, max ${lag.max} ms over ${lag.samples} probes${lag.lost ? `, ${lag.lost} never seen` : ""}`);
  if (reference) console.log(`\n${referenceTable(reference)}`);
  for (const v of recorder.violations.slice(0, 10)) console.log(`  wrong: ${v}`);
  for (const m of convergence.mismatches.slice(0, 10)) console.log(`  wrong count: item ${m.item} is ${m.got}, expected ${m.expected}`);
  for (const e of recorder.errorSamples.slice(0, 5)) console.log(`  error: ${e}`);
  for (const e of warmUps.errorSamples.slice(0, 5)) console.log(`  error in a warm-up: ${e}`);
  if (summary.total.rejected + warm.rejected > 0) {
    console.log(`  ${summary.total.rejected} timed requests and ${warm.rejected} in warm-ups were rate limited (429): use --start, or raise RATE_LIMIT_PER_MINUTE / RATE_LIMIT_PER_DAY`);
  }
  const files = writeReports(report, opts.out);
  console.log(`reports: ${files.json}\n         ${files.html}`);
  const refused = opts.figure && passed ? figureRefusal() : null;
  if (refused) console.error(refused);
  if (opts.figure && passed && !refused) {
    const run = { argv: process.argv.slice(2), commit: currentCommit(root), startedAt: report.startedAt, machine: machineNow() };
    // With --reference the figure is the comparison, round by round and its medians: the ratios are what a doc quotes.
    saveFigure(reference ? referenceFigure(opts.figure, run, referenceRows(reference)) : runFigure(opts.figure, { ...run, summary }));
    const ladder = reference ? yardstickRows(reference) : [];
    if (ladder.length > 0) saveFigure(referenceFigure(`${opts.figure}-yardstick`, run, ladder, 1));
    const pooled = reference ? pooledRows(reference) : [];
    if (pooled.length > 0) saveFigure(referenceFigure(`${opts.figure}-pooled`, run, pooled, 1));
    const native = reference ? nativeRows(reference) : [];
    if (native.length > 0) saveFigure(referenceFigure(`${opts.figure}-native`, run, native, 1));
    const behind = reference ? behindRows(reference) : [];
    if (behind.length > 0) saveFigure(referenceFigure(`${opts.figure}-behind`, run, behind, 1));
    const flushes = reference ? flushRows(reference) : [];
    if (flushes.length > 0) saveFigure(referenceFigure(`${opts.figure}-flushes`, run, flushes, 1));
    if (scenario.mix.some((m) => m.op.kind === "write")) {
      const table = costsFigure(writeCosts, criticalPath, idle);
      saveFigure(tableFigure(`${opts.figure}-costs`, { script: "bench", ...run }, table.columns, table.rows));
    }
  }
  return passed && !refused ? 0 : 1;
}

/**
 * The timed phases: plaudit's alone, or `--rounds` rounds taking turns with
 * the reference Workers. plaudit's phases go on with the same model, so each
 * is checked as exactly as a single one, and are reported as one recorder;
 * after each, the next phase waits until plaudit's pipeline has gone quiet.
 * The hot head's commits and its share of the item's writes are counted on the clock only, phase by phase.
 */
async function clock(
  ctx: RunContext,
  users: readonly string[],
  items: readonly string[],
  opts: Options,
  service: string,
  references: readonly StartedReference[],
  serverPid: number | null,
  serverPort: number,
) {
  const recorder = new Recorder();
  let seconds = 0;
  const onClock = { commits: 0, applies: 0, writes: 0 };
  const critical = { phases: 0, likeRequests: 0, queries: 0, firstSights: 0 };
  const criticalFromStart = opts.warmUp > 0;
  let prepared = ZERO_COSTS as ReadCosts | null;
  const hotHead = async () => await hotItemShare(ctx.http, service, ctx.picker.hot);
  // What a phase leaves for its settling to account for.
  let before: Awaited<ReturnType<typeof hotHead>> = null;
  let early: Awaited<ReturnType<typeof scrapeMetrics>> | null = null;
  let phaseEndedAt = 0;
  let firstSights = 0;
  // The warm-ups' requests: off the clock, but checked as the timed phases' are.
  const warmUps = new Recorder();
  /** Runs requests off the clock: the read routes' costs per request are the timed phases' alone. */
  const offTheClock = async (work: () => Promise<void>) => {
    const before = await readCosts(ctx.http, service);
    await work();
    prepared = plus(prepared, diff(before, await readCosts(ctx.http, service)));
  };
  // The head's own figures live in its memory and start again from 0 when it restarts (an eviction between rounds).
  const grown = (after: number, before: number) => (after >= before ? after - before : after);
  /** The reads that account for a phase: after it, so that with a warm-up they are outside its CPU figure. */
  const account = async () => {
    const late = await settledMetrics(ctx.http, service);
    if (early) {
      critical.phases++;
      critical.queries += delta(early, late, "plaudit_d1_queries_total", { path: "critical" });
      critical.likeRequests += delta(early, late, "plaudit_toggle_outcomes_total", { counter: "likes" });
      critical.firstSights += firstSights;
    }
    const after = await hotHead();
    if (after) {
      const applies = grown(after.headApplies, before?.headApplies ?? 0);
      onClock.commits += grown(after.headCommits, before?.headCommits ?? 0);
      onClock.applies += applies;
      onClock.writes += applies + (after.writes - after.headApplies) - ((before?.writes ?? 0) - (before?.headApplies ?? 0));
    }
  };
  /**
   * After a warm-up, the reads a phase is accounted from, made at the end of
   * the warm-up: outside the phase's latencies and its CPU figure, as the
   * references' phases carry no such reads. The critical-path count then
   * starts with the phase: the warm-up has met the items it named, and the
   * phase's first sights are counted in the floor beside it.
   */
  const beforeThePhase = async () => {
    before = await hotHead();
    await startCriticalCount();
  };
  /** The critical-path count's first read; it can fail like any request (under a saturating load): that phase is then left out of the figure. */
  const startCriticalCount = async () => {
    early = await scrapeMetrics(ctx.http, service).catch(() => null);
    ctx.sights?.countFrom();
  };
  const plaudit: Contender = {
    name: PLAUDIT,
    cpuMs: () => (serverPid === null ? null : workerdCpuMs(serverPid)),
    ...(opts.native && serverPid !== null ? { native: () => NativeSampler.start(serverPid, serverPort) } : {}),
    ...(opts.feedFirst
      ? {
          async prepare() {
            await offTheClock(async () => {
              const limited = await showEveryItem(ctx, items, recorder);
              if (limited > 0) console.error(`${limited} feeds before the phase were rate limited (429): their items were not shown`);
            });
          },
        }
      : {}),
    ...(opts.warmUp > 0
      ? {
          async warmUp() {
            console.error(`plaudit: ${opts.warmUp} s of warm-up...`);
            await offTheClock(async () => warmUps.absorb((await timedPhase(ctx, users, opts.scenario, { ...opts, seconds: opts.warmUp })).recorder));
            await beforeThePhase();
          },
        }
      : {}),
    async phase() {
      if (!criticalFromStart) before = await hotHead();
      const timed = timedPhase(ctx, users, opts.scenario, opts);
      if (!criticalFromStart) {
        // The first second is left out: an isolate that starts knows no item yet.
        await sleep(Math.min(1_000, opts.seconds * 500));
        await startCriticalCount();
      }
      const phase = await timed;
      phaseEndedAt = Date.now();
      firstSights = ctx.sights?.stop() ?? 0;
      recorder.absorb(phase.recorder);
      seconds += phase.seconds;
      return phaseSummary(phase.recorder, phase.seconds);
    },
    async settle() {
      await account();
      const { quiet, ms } = await awaitQuiet(ctx.http, service, opts.convergeSeconds * 1000, phaseEndedAt);
      if (quiet) console.error(`plaudit quiet ${(ms / 1000).toFixed(1)} s after its phase`);
      else console.error(`plaudit still busy ${(ms / 1000).toFixed(1)} s after its phase: the next phase shares the machine with it`);
    },
  };
  let reference: ReferenceComparison | null = null;
  if (references.length === 0) {
    await plaudit.prepare?.();
    await plaudit.warmUp?.();
    await plaudit.phase();
    await account();
  } else {
    const others = referenceContenders(references, (http) => ({ ...ctx, http, sights: undefined }), users, opts.scenario, opts);
    try {
      reference = await runRounds(plaudit, others.contenders, opts.rounds);
    } finally {
      others.close();
    }
  }
  // The checks after the clock record into the one recorder of plaudit's phases.
  ctx.recorder = recorder;
  const per100 = (n: number) => (critical.likeRequests === 0 ? 0 : Math.round((n / critical.likeRequests) * 10_000) / 100);
  return { recorder, warmUps, seconds, onClock, reference, prepared, criticalPath: { ...critical, fromStart: criticalFromStart, per100: per100(critical.queries), floorPer100: per100(critical.firstSights) } };
}

/** Settles undecided edges with has_liked, then waits until every touched item's count is exact. */
async function settleAndConverge(ctx: RunContext, tokens: ReadonlyMap<string, string>, seconds: number) {
  for (const why of await settleUndecided(ctx.http, ctx.model, tokens)) ctx.recorder.violation(why);
  return await awaitConvergence(ctx.http, ctx.model, seconds * 1000);
}

const results = join(root, "bench", "results");
process.exitCode = isScenarioRun(process.argv, "live")
  ? await runLiveBench(process.argv.slice(2), results)
  : isScenarioRun(process.argv, "viral")
    ? await runViralBench(process.argv.slice(2), results)
    : await main();
