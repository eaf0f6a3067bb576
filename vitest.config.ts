import { tmpdir } from "node:os";
import { join } from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { textModules } from "./scripts/text-modules.ts";

export const TEST_SECRETS = "test-secret-primary,test-secret-rotated";
export const TEST_ISSUER = "https://issuer.plaudit.test/";
export const TEST_AUDIENCE = "plaudit-test";

/**
 * What every workerd test sets beyond the defaults of shared/config.ts (the
 * pool reads wrangler.toml, never a developer's .dev.vars).
 */
const BINDINGS = {
  AUTH_SECRET: TEST_SECRETS,
  // A busy test machine makes many requests "slow"; the slow-request log has its own test.
  SLOW_REQUEST_MS: "60000",
};

/** Hot-item tests: thresholds low enough that a test's burst splits an item and a pause cools it. */
const HOT_BINDINGS = {
  ...BINDINGS,
  RATE_LIMIT_PER_MINUTE: "1000",
  HOT_WRITES_PER_SEC: "10",
  HOT_WINDOW_SECONDS: "1",
  HOT_SHARDS: "4",
  COOL_WRITES_PER_SEC: "1",
  COOL_WINDOW_SECONDS: "2",
  CHILD_REPORT_MS: "50",
  SHARD_MAP_TTL_MS: "5000",
  // A hot item's stores are rechecked every 2 s, so a test sees a repair within seconds.
  RECHECK_INTERVAL_SECONDS: "2",
};

/**
 * Growth tests: the hot-item settings, with children near their capacity at
 * 2 writes a second each, so a burst grows an item from N = 4 to 16 (and no
 * further), and no shard map cached, so every new edge learns the item's
 * current N from its head.
 */
const GROW_BINDINGS = { ...HOT_BINDINGS, HOT_GROW_WRITES_PER_CHILD: "2", HOT_MAX_SHARDS: "16", SHARD_MAP_TTL_MS: "0" };

/** The feed and pipeline tests again, with counts spread over two D1 databases (K = 2) and emissions over two queues (Q = 2). */
const TWO_DATABASES = { ...BINDINGS, COUNT_DATABASES: "2", EVENT_QUEUES: "2" };
/** The feed tests again over four databases: a feed's items then fall in more of them than a feed may make round trips. */
const FOUR_DATABASES = { ...BINDINGS, COUNT_DATABASES: "4", EVENT_QUEUES: "2" };
/**
 * Resharding from the default layout (one database) to larger ones under load:
 * every count database migrated, the layout re-read every 100 ms and each
 * phase lasting 1 s, and no read cache, so every feed reads the stores in
 * every phase.
 */
const RESHARD = {
  ...BINDINGS,
  TEST_MIGRATED_DATABASES: "4",
  LAYOUT_TTL_MS: "100",
  RESHARD_GRACE_MS: "1000",
  READ_CACHE_MEMORY_TTL_MS: "0",
  READ_CACHE_EDGE_TTL_MS: "0",
};

/**
 * Files that read what the whole runtime holds (every object's alarms, every
 * recent or indexed item of a store, a pass, the queue's backlog, every
 * pending intent, /metrics totals and alert states, every log line, the key
 * sets it cached), so they start in a runtime of their own. In the other
 * projects a file hands its runtime, modules loaded, to the project's next
 * file (isolate: false; one runtime per worker slot), each file on items of
 * its own (freshId).
 */
const ALONE = [
  "test/workers/auth-keysets.test.ts",
  "test/workers/central-store.test.ts",
  "test/workers/dead-letters.test.ts",
  "test/workers/deadlines.test.ts",
  "test/workers/edge-limits.test.ts",
  "test/workers/fuzz.test.ts",
  "test/workers/idle.test.ts",
  "test/workers/import-backpressure.test.ts",
  "test/workers/metrics.test.ts",
  "test/workers/metrics-accumulators.test.ts",
  "test/workers/metrics-alerts.test.ts",
  "test/workers/metrics-flush.test.ts",
  "test/workers/metrics-request-log.test.ts",
  "test/workers/migrations.test.ts",
  "test/workers/pass-guards.test.ts",
  "test/workers/passes.test.ts",
  "test/workers/pending-intents.test.ts",
  "test/workers/pipeline-reconcile.test.ts",
  "test/workers/reads.test.ts",
  "test/workers/rebuild.test.ts",
  "test/workers/row-costs.test.ts",
  "test/workers/standing.test.ts",
];
const HOT_ALONE = ["test/hot/handover.test.ts", "test/hot/metrics-hot-cooling.test.ts", "test/hot/metrics-hot-items.test.ts", "test/hot/recheck.test.ts"];

type Runtime = { isolate: boolean };
const SHARED: Runtime = { isolate: false };
const OWN: Runtime = { isolate: true };

function workerdProject(name: string, include: string[], bindings: Record<string, string>, exclude: string[] = [], runtime: Runtime = OWN) {
  return {
    plugins: [
      cloudflareTest(async ({ inject }) => ({
        main: "./workers/index.ts",
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            ...bindings,
            // The central store: the dynalite that test/node/dynalite-setup.ts started for this project.
            ALTERNATOR_ENDPOINT: inject("alternatorEndpoint"),
            ALTERNATOR_TABLE_PREFIX: "plaudit_",
            ALTERNATOR_REGION: "us-east-1",
            TEST_MIGRATIONS: await readD1Migrations("./migrations"),
            // A store that accepts and never answers (test/node/hanging-setup.ts).
            TEST_HANGING_ENDPOINT: inject("hangingEndpoint"),
            // Tokens from an identity provider too: test/node/jwks-setup.ts serves its key sets.
            TEST_JWKS_SERVER: inject("jwksServer"),
            AUTH_JWKS_URL: `${inject("jwksServer")}/default/jwks.json`,
            AUTH_ISSUER: TEST_ISSUER,
            AUTH_AUDIENCE: TEST_AUDIENCE,
          },
          // Per-client limits low enough that a test reaches them in a few requests.
          ratelimits: {
            WRITE_IP_LIMITER: { simple: { limit: 8, period: 60 } },
            WRITE_DEVICE_LIMITER: { simple: { limit: 5, period: 60 } },
            READ_IP_LIMITER: { simple: { limit: 12, period: 60 } },
          },
        },
      })),
      textModules(),
    ],
    test: {
      name,
      // Four files at a time on two cores: most of a file's time waits on
      // alarms, queue batches and object start-ups, not on CPU. Ids are drawn so that files
      // sharing a project's central store or runtime never meet on an item
      // (test/workers/helpers.ts freshId).
      sequence: { groupOrder: 0 },
      maxWorkers: 4,
      isolate: runtime.isolate,
      // Generous: CI machines have two cores, and some runs are twice as
      // slow as others on the same machine; no test asserts on time. A
      // file's beforeAll often does a test's work (calls, then waiting for
      // their deliveries), so it is given as long as a test.
      testTimeout: 120_000,
      hookTimeout: 120_000,
      // The objects' logs go to the runtime's own output, not through Vitest's
      // console RPC: a log line sent from an object's request that is then
      // aborted (abortAllDurableObjects, an eviction) leaves an RPC that never
      // settles, and Vitest waits for every one before it ends a file.
      disableConsoleIntercept: true,
      include,
      exclude,
      setupFiles: ["./test/workers/setup.ts"],
      // The Worker's dependencies bundled once each, so a fresh runtime loads
      // one module per dependency instead of each of their files (about a
      // second less per runtime, and most files start one).
      deps: { optimizer: { ssr: { enabled: true, include: ["hono", "hono/factory", "hono/route", "zod", "jose", "aws4fetch"] } } },
      globalSetup: ["./test/node/dynalite-setup.ts", "./test/node/jwks-setup.ts", "./test/node/hanging-setup.ts"],
    },
  };
}

/** `npm run typecheck`, as a test. */
const TYPECHECK = "test/node/typecheck.test.ts";

/** The node files that start a whole local server. */
const SERVERS = [
  "test/node/converging-reference.test.ts",
  "test/node/crash.test.ts",
  "test/node/crash-delivery.test.ts",
  "test/node/dashboard.browser.test.ts",
  "test/node/docs.browser.test.ts",
  "test/node/front-reference.test.ts",
  "test/node/like-button.browser.test.ts",
  "test/node/live.browser.test.ts",
  "test/node/live.test.ts",
  "test/node/start-crash.test.ts",
  "test/node/try-it.test.ts",
];

function nodeProject(name: string, include: string[], exclude: string[], groupOrder: number, maxWorkers: number, extra: { setupFiles?: string[]; env?: Record<string, string>; expect?: { poll: { timeout: number } } } = {}) {
  return {
    test: {
      name,
      environment: "node",
      sequence: { groupOrder },
      maxWorkers,
      include,
      exclude,
      // Generous, as for the workerd projects: child processes (wrangler, promtool, redocly) are slow on a busy machine.
      testTimeout: 60_000,
      hookTimeout: 60_000,
      ...extra,
    },
  };
}

export default defineConfig({
  test: {
    projects: [
      workerdProject("workers", ["test/workers/**/*.test.ts"], BINDINGS, ALONE, SHARED),
      // Named to sort first: Vitest takes a group's projects in name order,
      // and these hold long files (the fuzzer, the passes), so the shared
      // projects' many short files fill the group's last minutes.
      workerdProject("alone", ALONE, BINDINGS),
      workerdProject("hot", ["test/hot/**/*.test.ts"], HOT_BINDINGS, HOT_ALONE, SHARED),
      // The hand-over's objects' alarms (hand-over batches and cooling checks)
      // outlive the file, so a file run after it in the same runtime could
      // wait on them; the hot-items metrics list every hot item of the
      // isolate; the recheck counts repairs of any item.
      workerdProject("alone-hot", HOT_ALONE, HOT_BINDINGS),
      workerdProject("grow", ["test/grow/**/*.test.ts"], GROW_BINDINGS),
      workerdProject("k2", ["test/k2/**/*.test.ts", "test/workers/reads.test.ts", "test/workers/privacy-reads.test.ts", "test/workers/rebuild.test.ts"], TWO_DATABASES),
      workerdProject("k4", ["test/workers/reads.test.ts", "test/workers/privacy-reads.test.ts"], FOUR_DATABASES),
      workerdProject("reshard", ["test/reshard/**/*.test.ts"], RESHARD),
      // Checks that need Node rather than workerd (tools that compile code at
      // run time, child processes), beside the workerd files: none starts a whole server.
      nodeProject("node", ["test/node/**/*.test.ts"], [...SERVERS, TYPECHECK], 0, 4),
      // After the workerd files, in two slots: the files that start a whole
      // server (wrangler dev, its runtime, often a central store and a
      // browser) one at a time (a lock), and beside the first of them the
      // typecheck (named to sort first: Vitest hands out a group's files in
      // project name order). Two servers side by side are not run: two at a
      // time, 2 of 9 full runs had requests answered 503 by the local runtime
      // ("Your worker restarted mid-request"), and before that a live socket
      // closed (1006) under the load.
      nodeProject("node-check-types", [TYPECHECK], [], 1, 2),
      nodeProject("node-servers", SERVERS, [], 1, 2, {
        setupFiles: ["./test/node/one-server-at-a-time.ts"],
        env: { PLAUDIT_SERVER_LOCK: join(tmpdir(), `plaudit-server-lock-${process.pid}`) },
        // A page, a socket or a server answers in seconds on a busy machine, not in Vitest's one.
        expect: { poll: { timeout: 10_000 } },
      }),
    ],
  },
});

// For the checks that run apart from `npm test` (vitest.scale.config.ts).
export { BINDINGS, workerdProject };
