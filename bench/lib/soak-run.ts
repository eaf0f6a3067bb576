// The soak: the customer's traffic shape for N minutes against a local
// plaudit with a real central store (dynalite on 127.0.0.1), the whole server
// SIGKILLed every few minutes and restarted on the same state, reconciliation
// fired on its schedule, and after every kill the exact checks: every
// acknowledged like survived, every count converged in the objects, D1 and the
// central store, and no count was ever negative.
import { execFileSync } from "node:child_process";
import { spawnCentralStore } from "../../scripts/central-store-process.mjs";
import { awaitConvergence, awaitOutboxesDrained, settleUndecided } from "./checks";
import { HttpClient } from "./http";
import { LikeModel } from "./model";
import { idRange, ITEM_TYPE, serviceToken, userTokens } from "./plaudit";
import { Recorder } from "./recorder";
import { startServer, type LocalServer } from "./server";
import { ItemPicker, seededRandom } from "./zipf";
import { pick, type Scenario } from "../scenarios/index";
import { countRead, feedRead, hasLikedRead, likeOrUnlike, shareEvent, viewEvent, writeToggle, type RunContext } from "../scenarios/operations";
import { centralCounts, metricValue, objectCounts, scrapeMetrics } from "./soak-checks";

export type SoakOptions = {
  minutes: number;
  killEveryMinutes: number;
  reconcileEverySeconds: number;
  connections: number;
  users: number;
  items: number;
  hotShare: number;
  seed: number;
  vars: Record<string, string>;
  stateDir: string;
  progress: (line: string) => void;
  onServer: (server: LocalServer | null) => void;
};

/** One 10-second sample of the run. */
export type SoakSample = {
  t: number;
  ops: number;
  errors: number;
  p50: number;
  p99: number;
  rssMb: number;
  queueLagSeconds: number | null;
};

export type KillRound = {
  atSecond: number;
  /** Items with at least one like or unlike when the server was killed. */
  acknowledgedBefore: number;
  /** Requests in flight at the kill (one per connection): landed or not, has_liked decides. */
  inFlight: number;
  restartMs: number;
  convergenceMs: number;
  converged: boolean;
  storesAgree: boolean;
  disagreements: string[];
  drained: boolean;
};

export type ReconcileRun = { atSecond: number; driftRatio: number | null };

export type SoakResult = {
  passed: boolean;
  minutes: number;
  samples: SoakSample[];
  kills: KillRound[];
  reconciliations: ReconcileRun[];
  violations: string[];
  negatives: string[];
  totals: { operations: number; errors: number; likes: number; items: number };
  final: KillRound;
};

const SAMPLE_MS = 10_000;
/** After a kill, emissions lost with the local queue come back when their objects resend them: up to the resend backoff (five minutes at most). */
const SETTLE_MS = 6 * 60_000;

/** The customer's shape: reads to writes 100 to 1, feeds of 50 over a long tail, views and shares, likes and unlikes. */
const SOAK_MIX: Scenario["mix"] = [
  { op: feedRead, weight: 60 },
  { op: countRead, weight: 25 },
  { op: hasLikedRead, weight: 15 },
  { op: likeOrUnlike, weight: 1 },
  { op: viewEvent, weight: 0.5 },
  { op: shareEvent, weight: 0.1 },
];
/** Each phase, one fresh item goes viral for this long: every connection likes it with one user after another. */
const VIRAL_MS = 15_000;
const VIRAL_START_MS = 20_000;

/** Resident memory of every process in the server's process group (node, wrangler, workerd), in MB. */
function groupRssMb(server: LocalServer): number {
  try {
    const out = execFileSync("ps", ["-o", "rss=", "-g", String(server.pid)], { encoding: "utf8" });
    return Math.round(out.split("\n").reduce((sum, line) => sum + (Number(line.trim()) || 0), 0) / 1024);
  } catch {
    return 0;
  }
}

/**
 * The central store as `npm start` and the tests run it (scripts/central-store.mjs,
 * in memory): a process of its own that drops a request whose client went
 * away. The server's kills cut its calls to the store off mid-request, and
 * dynalite on its own throws those out of the process.
 */
async function startCentralStore(): Promise<{ endpoint: string; close: () => Promise<void> }> {
  const { store, endpoint } = spawnCentralStore();
  const exited = new Promise<void>((done) => store.once("exit", () => done()));
  return {
    endpoint: await endpoint,
    // Closing its stdin is the store's signal to stop.
    close: async () => {
      store.stdin.end();
      await exited;
    },
  };
}

export async function soak(options: SoakOptions): Promise<SoakResult> {
  const random = seededRandom(options.seed);
  const users = idRange(options.users);
  const items = idRange(options.items, 200_000_000n);
  const model = new LikeModel();
  const central = await startCentralStore();
  const vars = { ...options.vars, ALTERNATOR_ENDPOINT: central.endpoint };
  let server = await startServer({ stateDir: options.stateDir, vars });
  options.onServer(server);
  const tokens = await userTokens(users, server.secret);
  const service = await serviceToken(server.secret);
  const violations: string[] = [];
  const negatives = new Set<string>();
  const samples: SoakSample[] = [];
  const kills: KillRound[] = [];
  const reconciliations: ReconcileRun[] = [];
  let operations = 0;
  let errors = 0;
  const started = Date.now();
  const end = started + options.minutes * 60_000;
  const second = () => Math.round((Date.now() - started) / 1000);

  try {
    let nextKill = started + options.killEveryMinutes * 60_000;
    let nextReconcile = started + options.reconcileEverySeconds * 1000;
    let viralNext = 0;
    while (Date.now() < end) {
      const phaseEnd = Math.min(end, nextKill);
      const http = new HttpClient(server.url, options.connections);
      const ctx: RunContext = {
        http,
        model,
        picker: new ItemPicker(items, options.hotShare, 1.1, random),
        recorder: new Recorder(),
        tokens,
        random,
        duplicateShare: 0.02,
        readsExact: false,
      };
      const sampler = setInterval(() => void sample(), SAMPLE_MS);
      const sample = async () => {
        const summary = ctx.recorder.summary(SAMPLE_MS / 1000);
        const metrics = await scrapeMetrics(http, service);
        samples.push({
          t: second(),
          ops: Math.round(summary.total.count / (SAMPLE_MS / 1000)),
          errors: summary.total.errors,
          p50: summary.total.p50,
          p99: summary.total.p99,
          rssMb: groupRssMb(server),
          queueLagSeconds: metrics ? metricValue(metrics, "plaudit_aggregator_lag_seconds") : null,
        });
        operations += summary.total.count;
        errors += summary.total.errors;
        violations.push(...ctx.recorder.violations);
        ctx.recorder = new Recorder();
        const last = samples.at(-1)!;
        options.progress(
          `[${(second() / 60).toFixed(1)}/${options.minutes} min] ${last.ops} ops/s p99 ${last.p99.toFixed(1)} ms, ` +
            `errors ${errors}, wrong ${violations.length}, kills ${kills.length}, rss ${last.rssMb} MB`,
        );
        if (Date.now() >= nextReconcile) {
          nextReconcile += options.reconcileEverySeconds * 1000;
          await http.request("GET", `/__scheduled?cron=${encodeURIComponent("*/5 * * * *")}`);
          const after = await scrapeMetrics(http, service);
          reconciliations.push({ atSecond: second(), driftRatio: after ? metricValue(after, "plaudit_reconciliation_drift_ratio") : null });
        }
      };

      const viralItem = idRange(1, 300_000_000n + BigInt(viralNext++))[0]!;
      const viralFrom = Date.now() + VIRAL_START_MS;
      let viralUser = 0;
      const loops = Array.from({ length: options.connections }, async (_, w) => {
        const mine = users.filter((_, i) => i % options.connections === w);
        while (Date.now() < phaseEnd) {
          const now = Date.now();
          if (w % 2 === 0 && now >= viralFrom && now < viralFrom + VIRAL_MS && viralUser < users.length) {
            const user = users[viralUser++]!;
            if (ctx.model.liked(user, viralItem) !== true) await writeToggle(ctx, user, viralItem, true);
            continue;
          }
          const op = pick(SOAK_MIX, random);
          await op.run(ctx, mine[Math.floor(random() * mine.length)]!);
        }
      });
      await Promise.all(loops);
      clearInterval(sampler);
      await sample();
      if (Date.now() >= end) {
        http.close();
        break;
      }

      // Killed while every connection still has a request in flight: an answer lost to the kill is undecided in the model.
      const inFlightLoops = Array.from({ length: options.connections }, async (_, w) => {
        const mine = users.filter((_, i) => i % options.connections === w);
        await likeOrUnlike.run({ ...ctx, recorder: new Recorder() }, mine[0]!);
      });
      await new Promise((r) => setTimeout(r, 5));
      const acknowledgedBefore = model.items().length;
      await server.kill();
      await Promise.all(inFlightLoops);
      http.close();
      const killedAt = Date.now();
      server = await startServer({ stateDir: options.stateDir, vars, secret: server.secret });
      options.onServer(server);
      const restartMs = Date.now() - killedAt;
      const round = await checkAll(server, central.endpoint, model, tokens, service, negatives);
      kills.push({ ...round, atSecond: second(), acknowledgedBefore, inFlight: options.connections, restartMs });
      violations.push(...round.violations);
      options.progress(
        `kill ${kills.length}: restarted in ${restartMs} ms; ${round.converged && round.storesAgree ? "every store exact" : "NOT exact"} ` +
          `after ${round.convergenceMs} ms; outboxes ${round.drained ? "drained" : "NOT drained"}` +
          (round.disagreements.length > 0 ? `; first: ${round.disagreements.slice(0, 3).join("; ")}` : ""),
      );
      nextKill = Date.now() + options.killEveryMinutes * 60_000;
    }
    const finalRound = await checkAll(server, central.endpoint, model, tokens, service, negatives);
    violations.push(...finalRound.violations);
    const final: KillRound = { ...finalRound, atSecond: second(), acknowledgedBefore: 0, inFlight: 0, restartMs: 0 };
    const passed =
      violations.length === 0 && negatives.size === 0 && [...kills, final].every((k) => k.converged && k.storesAgree && k.drained);
    return {
      passed,
      minutes: options.minutes,
      samples,
      kills,
      reconciliations,
      violations: violations.slice(0, 100),
      negatives: [...negatives],
      totals: { operations, errors, likes: model.items().reduce((n, item) => n + (model.expectedCount(item) ?? 0), 0), items: model.items().length },
      final,
    };
  } finally {
    await server.stop();
    options.onServer(null);
    await central.close();
  }
}

/**
 * After a restart: settle the edges whose requests got no answer (has_liked
 * is exact), wait for the API's counts (D1) to equal the model, then compare
 * every touched item's count in its object (the admin view) and in the
 * central store, and wait for the user outboxes to drain.
 */
async function checkAll(
  server: LocalServer,
  centralEndpoint: string,
  model: LikeModel,
  tokens: ReadonlyMap<string, string>,
  service: string,
  negatives: Set<string>,
) {
  const http = new HttpClient(server.url, 16);
  try {
    const started = Date.now();
    const violations = await settleUndecided(http, model, tokens);
    const touched = model.items();
    const disagreements: string[] = [];
    const deadline = Date.now() + SETTLE_MS;
    // The objects first: reading them wakes any that a kill left with emissions to resend.
    for (;;) {
      disagreements.length = 0;
      const [objects, stored] = await Promise.all([objectCounts(http, service, touched), centralCounts(centralEndpoint, touched)]);
      for (const item of touched) {
        const expected = model.expectedCount(item);
        if (objects.get(item) !== expected) disagreements.push(`${ITEM_TYPE}:${item}: object ${objects.get(item)}, expected ${expected}`);
        if ((stored.get(item) ?? 0) !== expected) disagreements.push(`${ITEM_TYPE}:${item}: central store ${stored.get(item)}, expected ${expected}`);
        if ((objects.get(item) ?? 0) < 0 || (stored.get(item) ?? 0) < 0) negatives.add(item);
      }
      if (disagreements.length === 0 || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const convergence = await awaitConvergence(http, model, Math.max(1_000, deadline - Date.now()));
    const convergedAfterMs = Date.now() - started;
    for (const item of convergence.negatives) negatives.add(item);
    const writers = [...new Set(touched.flatMap((item) => model.usersOf(item)))];
    const { drained } = await awaitOutboxesDrained(http, service, writers, SETTLE_MS);
    return {
      violations,
      convergenceMs: convergedAfterMs,
      converged: convergence.converged,
      storesAgree: disagreements.length === 0,
      disagreements: disagreements.slice(0, 20),
      drained,
    };
  } finally {
    http.close();
  }
}
