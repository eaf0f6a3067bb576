// The load generator's options: parsing, defaults and the help text.
// Bad options exit with code 2 and the usage.
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { SCENARIOS } from "./scenarios/index";
import { perfMissing } from "./lib/native";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Rounds under --reference: the fewest whose median one outlying round cannot set. */
const DEFAULT_ROUNDS = 3;

const USAGE = `usage: npm run bench -- [options]
  --scenario NAME        ${Object.keys(SCENARIOS).join(" | ")} (default write), or live / viral (own options: bench/scenarios/live.ts, viral.ts)
  --seconds N            timed phase length (default 20)
  --connections N        concurrent requests (default 16); with --rate, the most sockets open at once
  --rate R               open loop: R requests a second on a fixed schedule, whatever the answers take
                         (the same schedule for plaudit and each reference); latency counts from each
                         request's arrival time, late answers are waited for, never dropped
  --users N              simulated users, each sequential (default 200)
  --items N              items, Zipf-distributed (default 200; feed: 5000, a long tail)
  --hot-share F          share of writes that go to the one hot item (default 0.5)
  --zipf S               Zipf exponent of item popularity (default 1.0)
  --duplicate-share F    share of writes sent twice at once, as a racing retry (default 0.05)
  --feed-first           before each of plaudit's timed phases, off the clock and before its CPU reading,
                         show every item once in feeds of 50 (POST /v1/counts), as an app shows an item
                         before its users like it, so the phase's likes are of items the isolate has met
  --warm-up N            before each timed phase of every side, N seconds of the same load off the clock
                         (default 0), so the phase meets its server in a steady state: objects started or
                         evicted as the load keeps them, the work earlier likes set off running beside it.
                         Each side's CPU figure then covers its timed phase alone (the work the warm-up left
                         running is in it, the work the phase leaves running is not); without a warm-up it
                         covers the phase and the settling after it
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
  --reference            also start the reference Workers (bench/reference/) beside plaudit and load
                         them with the same scenario, taking turns with plaudit, reporting the ratios
  --references A,B       with --reference: only these of the scenario's reference Workers, run in the scenario's
                         order (default: all; write: ${SCENARIOS.write!.references.join(", ")})
  --rounds N             with --reference: rounds of one timed phase per worker, plaudit first in odd
                         rounds and last in even ones; the median ratio is the figure (default 3; 1 to 20)
  --native               with --start and --reference: sample every side's workerd processes with Linux \`perf\` during its
                         phases and split its CPU per request by native part (SQL, commits' disk flush, object
                         starts and evictions, alarms, JavaScript, the proxy), and say what its event loop did
                         while each phase's answers at or past its p99 were on their way; sampling slows every
                         side, so quote no latency from such a run; it also traces every disk flush (fsync) with
                         what asked for it and how long the event loop sat blocked in it (with --figure, saved as
                         NAME-native, NAME-behind and NAME-flushes)
  --out DIR              where reports go (default bench/results)
  --figure NAME          also write the run's table to bench/reports/NAME.json (committed), for the doc
                         table marked <!-- figures:NAME --> that \`npm run figures\` renders (only a run that passed, and
                         whose code at its end is the code at its start: wrangler dev reloads a server on an edit);
                         a run with writes also writes its costs per like as NAME-costs`;

export function options(argv: readonly string[] = process.argv.slice(2)) {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      scenario: { type: "string", default: "write" },
      seconds: { type: "string", default: "20" },
      connections: { type: "string", default: "16" },
      rate: { type: "string" },
      users: { type: "string", default: "200" },
      items: { type: "string" },
      "hot-share": { type: "string", default: "0.5" },
      zipf: { type: "string", default: "1.0" },
      "duplicate-share": { type: "string", default: "0.05" },
      "seed-likes": { type: "string", default: "500" },
      "feed-first": { type: "boolean", default: false },
      "warm-up": { type: "string", default: "0" },
      url: { type: "string", default: "http://127.0.0.1:8787" },
      secret: { type: "string" },
      start: { type: "boolean", default: false },
      reference: { type: "boolean", default: false },
      references: { type: "string" },
      native: { type: "boolean", default: false },
      rounds: { type: "string" },
      var: { type: "string", multiple: true, default: [] },
      "converge-seconds": { type: "string", default: "60" },
      "idle-seconds": { type: "string", default: "300" },
      "max-error-rate": { type: "string", default: "0" },
      "random-seed": { type: "string", default: String(Math.floor(Math.random() * 2 ** 31)) },
      out: { type: "string", default: join(root, "bench", "results") },
      figure: { type: "string" },
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
  if (values.references !== undefined && !values.reference) {
    console.error(`--references chooses among the reference Workers --reference starts: it needs --reference\n\n${USAGE}`);
    process.exit(2);
  }
  const opts = {
    scenario,
    seconds: num("seconds", 1, 3600),
    connections: num("connections", 1, 1024),
    rate: values.rate === undefined ? null : num("rate", 0.1, 100_000, false),
    users: num("users", 1, 1_000_000),
    items: values.items === undefined ? scenario.items : num("items", 1, 10_000_000),
    hotShare: num("hot-share", 0, 1, false),
    zipf: num("zipf", 0, 10, false),
    duplicateShare: num("duplicate-share", 0, 1, false),
    seedLikes: num("seed-likes", 0, 1_000_000),
    feedFirst: values["feed-first"],
    warmUp: num("warm-up", 0, 600),
    convergeSeconds: num("converge-seconds", 1, 3600),
    idleSeconds: num("idle-seconds", 0, 3600),
    maxErrorRate: num("max-error-rate", 0, 1, false),
    randomSeed: num("random-seed", 0, 2 ** 32),
    url: values.url,
    secret: values.secret,
    start: values.start,
    reference: values.reference,
    references: chosenReferences(values.references, scenario.references, values.scenario),
    native: values.native,
    rounds: values.rounds === undefined ? (values.reference ? DEFAULT_ROUNDS : 1) : num("rounds", 1, 20),
    vars: serverVars(values.var),
    out: resolve(values.out),
    figure: values.figure ?? null,
  };
  if (values.rounds !== undefined && !opts.reference) {
    console.error(`--rounds takes turns between plaudit and the reference Workers: it needs --reference\n\n${USAGE}`);
    process.exit(2);
  }
  if (opts.native && !(opts.reference && opts.start)) {
    console.error(`--native samples the servers the bench starts, beside the reference Workers: it needs --start and --reference\n\n${USAGE}`);
    process.exit(2);
  }
  const perf = opts.native ? perfMissing() : null;
  if (perf) {
    console.error(perf);
    process.exit(2);
  }
  if (opts.users < opts.connections) {
    console.error("--users must be at least --connections: each connection drives its own users, one request at a time");
    process.exit(2);
  }
  return opts;
}

export type Options = ReturnType<typeof options>;

/** The scenario's references named in `list` (all of them when it is absent), in the scenario's order; exits 2 on a name it does not have. */
function chosenReferences(list: string | undefined, offered: readonly string[], scenario: string): readonly string[] {
  if (list === undefined) return offered;
  const names = list.split(",").map((name) => name.trim());
  const unknown = names.filter((name) => !offered.includes(name)).map((name) => (name === "" ? "an empty name" : name));
  if (unknown.length > 0) {
    console.error(`--references: the ${scenario} scenario's reference Workers are ${offered.join(", ")}; not ${unknown.join(", ")}\n\n${USAGE}`);
    process.exit(2);
  }
  return offered.filter((name) => names.includes(name));
}

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

/** Whether the command line asks for a scenario that has a runner and options of its own (live, viral). */
export function isScenarioRun(argv: readonly string[], name: string): boolean {
  const at = argv.indexOf("--scenario");
  return at >= 0 && argv[at + 1] === name;
}

/** The options of such a scenario, besides --scenario and --out; unknown ones are ignored. */
export function scenarioArgs(argv: readonly string[], outDir: string, options: NonNullable<ParseArgsConfig["options"]>) {
  const { values } = parseArgs({
    args: [...argv],
    options: { scenario: { type: "string" }, out: { type: "string", default: outDir }, ...options },
    allowPositionals: false,
    strict: false,
  });
  return values;
}
