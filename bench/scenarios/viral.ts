// `npm run bench -- --scenario viral [--steps 6] [--step-seconds 2] [--liker-rate 2] [--hot-rate 10]`:
// one item goes viral. Its like rate doubles every step (1, 2, 4 ... 32
// concurrent likers, each paced to --liker-rate likes a second, every like
// from a new user), under the hot-item thresholds scaled for one machine
// through configuration. Three runs, each on its own fresh server: reactive
// (the sustained-rate rule alone), predicted (with the forecast) and hinted
// (the host app's hint before the first like). Reported for each: when the
// item split, the likes its head applied before and after (the head's own
// counters), like p50/p99 per step, the count checked exact, and what a single
// object at its documented capacity would have queued (bench/lib/queue-sim.ts).
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { scenarioArgs } from "../options";
import { HttpClient } from "../lib/http";
import { idRange, ITEM_TYPE, serviceToken, toggle, userTokens } from "../lib/plaudit";
import { simulateQueue } from "../lib/queue-sim";
import { removeStateDir, startServer } from "../lib/server";
import { headWritesPerSecond, printViral, VIRAL_COLUMNS, viralRow, viralStepsFigure, type HeadSample, type ModeResult, type StepResult } from "../lib/viral-report";
import { currentCommit, machineNow, saveFigure, tableFigure } from "../lib/figures";
import { percentile } from "../lib/recorder";

const MODES = ["reactive", "predicted", "hinted"] as const;
type Mode = (typeof MODES)[number];

/** The production threshold the bench's is scaled from (shared/config.ts). */
const PRODUCTION_HOT_RATE = 1_000;
/**
 * One object's capacity for writing requests: 200 to 500 a second (a soft
 * limit of about 1,000 requests a second, fewer with storage writes: the
 * platform figures of docs/hot-items.md). The upper figure, so
 * the simulation flatters the single object.
 */
const OBJECT_WRITES_PER_SEC = 500;

/** The thresholds of one machine: hot past --hot-rate writes/s over 5 s, 8 children; no cooling within a run. */
const scaledVars = (hotRate: number) => ({
  HOT_WRITES_PER_SEC: String(hotRate),
  HOT_WINDOW_SECONDS: "5",
  HOT_SHARDS: "8",
  HOT_PREDICT_SECONDS: "5",
  COOL_WRITES_PER_SEC: "3",
  COOL_WINDOW_SECONDS: "600",
  RATE_LIMIT_PER_MINUTE: "100000000",
  RATE_LIMIT_PER_DAY: "100000000",
});
const MODE_VARS: Record<Mode, Record<string, string>> = {
  reactive: { HOT_PREDICT_SECONDS: "0" },
  predicted: {},
  hinted: { HOT_PREDICT_SECONDS: "0" },
};
const SAMPLE_MS = 250;
const CONVERGE_MS = 60_000;

export async function runViralBench(argv: readonly string[], outDir: string): Promise<number> {
  const values = scenarioArgs(argv, outDir, {
    steps: { type: "string", default: "6" },
    "step-seconds": { type: "string", default: "2" },
    "liker-rate": { type: "string", default: "2" },
    "hot-rate": { type: "string", default: "10" },
    figure: { type: "string" },
  });
  const startedAt = new Date().toISOString();
  const steps = Number(values.steps);
  const stepSeconds = Number(values["step-seconds"]);
  const likerRate = Number(values["liker-rate"]);
  const hotRate = Number(values["hot-rate"]);
  if (!(hotRate >= 1 && hotRate <= PRODUCTION_HOT_RATE)) {
    console.error(`--hot-rate takes 1 to ${PRODUCTION_HOT_RATE} writes a second`);
    return 2;
  }
  if (!Number.isInteger(steps) || steps < 1 || steps > 8 || !(stepSeconds >= 1 && stepSeconds <= 30) || !(likerRate > 0 && likerRate <= 50)) {
    console.error("--steps takes 1 to 8 (up to 128 likers), --step-seconds 1 to 30, --liker-rate (likes a second per liker) up to 50");
    return 2;
  }
  const settings = scaledVars(hotRate);
  const scale = hotRate / PRODUCTION_HOT_RATE;
  const capacity = OBJECT_WRITES_PER_SEC * scale;
  const results: ModeResult[] = [];
  for (const mode of MODES) {
    console.error(`${mode}: starting plaudit with a fresh state folder...`);
    const result = await runMode({ ...settings, ...MODE_VARS[mode] }, mode, { steps, stepSeconds, likerRate });
    const perSecond = headWritesPerSecond(result.samples);
    results.push({ ...result, headPerSecond: perSecond, simulated: simulateQueue(perSecond, capacity) });
  }
  printViral(results, { scale, capacity, objectCapacity: OBJECT_WRITES_PER_SEC, settings });
  mkdirSync(String(values.out), { recursive: true });
  const file = join(String(values.out), `viral-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  const environment = { cpus: `${cpus().length} x ${cpus()[0]?.model ?? "unknown"}`, loadavg: loadavg(), node: process.version };
  const passed = results.every((r) => r.exact);
  writeFileSync(file, JSON.stringify({ scenario: "viral", passed, environment, settings, capacity, scale, results }, null, 2));
  console.log(`report: ${file}`);
  if (typeof values.figure === "string" && passed) {
    const run = { script: "bench", argv, commit: currentCommit(), startedAt, machine: machineNow() };
    saveFigure(tableFigure(values.figure, run, VIRAL_COLUMNS, results.map(viralRow)));
    const steps = viralStepsFigure(results);
    saveFigure(tableFigure(`${values.figure}-steps`, run, steps.columns, steps.rows));
  }
  return passed ? 0 : 1;
}

type RunResult = Omit<ModeResult, "headPerSecond" | "simulated">;

async function runMode(vars: Record<string, string>, mode: Mode, opts: RampOptions): Promise<RunResult> {
  const server = await startServer({ vars });
  let exact = false;
  const http = new HttpClient(server.url, 2 ** (opts.steps - 1) + 4);
  try {
    const service = await serviceToken(server.secret);
    const [item] = idRange(1, 600_000_000n) as [string];
    if (mode === "hinted") {
      const hinted = await http.request("POST", `/v1/admin/items/${ITEM_TYPE}/${item}/hot`, { token: service });
      if (hinted.status !== 200) throw new Error(`the hint answered ${hinted.status}`);
    }
    // Taken at 0: a hinted item is split before the ramp's first like.
    const before = await headSample(http, service, item, 0);
    const samples: HeadSample[] = before ? [before] : [];
    const started = performance.now();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const sample = await headSample(http, service, item, performance.now() - started);
        if (sample) samples.push(sample);
        await sleep(SAMPLE_MS);
      }
    })();
    const { stepResults, liked, unknown } = await ramp(http, item, server.secret, started, opts);
    sampling = false;
    await sampler;
    exact = await converged(http, service, item, liked, unknown);
    const last = await headSample(http, service, item, performance.now() - started);
    if (last) samples.push(last);
    if (!exact) console.error(`${mode}: the count did not settle at ${liked} likes (${unknown} answers lost)`);
    return { mode, stepResults, liked, unknown, exact, samples };
  } finally {
    http.close();
    await server.stop();
    if (exact) removeStateDir(server.stateDir);
    else console.error(`state and server.log kept in ${server.stateDir}`);
  }
}

type RampOptions = { steps: number; stepSeconds: number; likerRate: number };

/** Step k runs 2^k likers, each liking as a new user every 1 / likerRate seconds (or as soon as its last like answered). */
async function ramp(http: HttpClient, item: string, secret: string, started: number, opts: RampOptions) {
  let next = BigInt(idRange(1, 500_000_000n)[0]!);
  let liked = 0;
  let unknown = 0;
  const stepResults: StepResult[] = [];
  for (let step = 0; step < opts.steps; step++) {
    const likers = 2 ** step;
    const end = started + (step + 1) * opts.stepSeconds * 1000;
    const latencies: number[] = [];
    let errors = 0;
    await Promise.all(
      Array.from({ length: likers }, async () => {
        while (performance.now() < end) {
          const paced = sleep(1000 / opts.likerRate);
          const user = (next++).toString();
          const token = (await userTokens([user], secret)).get(user)!;
          const outcome = await toggle(http, token, item, true);
          if (outcome.kind === "answered" && outcome.answer.status === "liked") {
            liked++;
            latencies.push(outcome.res.ms);
          } else if (outcome.kind === "answered" && outcome.answer.status === null) {
            unknown++;
            errors++;
          } else errors++;
          await paced;
        }
      }),
    );
    latencies.sort((a, b) => a - b);
    stepResults.push({
      likers,
      likes: latencies.length,
      perSecond: latencies.length / opts.stepSeconds,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      errors,
    });
    console.error(`  ${likers} likers: ${latencies.length} likes, p50 ${percentile(latencies, 50).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms`);
  }
  return { stepResults, liked, unknown };
}

/** The head's own counters: the writes it applied (calls less refusals), and whether the item is split. */
async function headSample(http: HttpClient, service: string, item: string, t: number): Promise<HeadSample | null> {
  const res = await http.request("GET", `/v1/admin/items/${ITEM_TYPE}/${item}`, { token: service });
  if (res.status !== 200) return null;
  const body = res.body as { hot: boolean; counts: { likes: number }; calls: { applies: number; refused: number } };
  return { t, hot: body.hot, applied: body.calls.applies - body.calls.refused, likes: body.counts.likes };
}

/**
 * Whether the item's head (a strong read) and the public count agree on the
 * likes answered "liked", plus any of the likes whose answer was lost.
 */
async function converged(http: HttpClient, service: string, item: string, liked: number, unknown: number): Promise<boolean> {
  const deadline = Date.now() + CONVERGE_MS;
  while (Date.now() < deadline) {
    const head = await headSample(http, service, item, 0);
    const count = await http.request("GET", `/v1/count?item_id=${item}&item_type=${ITEM_TYPE}`);
    const likes = (count.body as { counts?: { likes?: number } } | null)?.counts?.likes;
    if (head && head.likes >= liked && head.likes <= liked + unknown && likes === head.likes) return true;
    await sleep(500);
  }
  return false;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
