import { z } from "zod";
import { MAX_PASS_STEP_ITEMS } from "./passes";

/**
 * A `wrangler.toml` var (or `.dev.vars` override) holding a number: unset or
 * blank means the default; anything else must be a finite number >= 0.
 */
function numberVar(fallback: number, min = 0) {
  return z
    .preprocess(
      (value) => (value === undefined || (typeof value === "string" && value.trim() === "") ? undefined : value),
      z.coerce.number().finite().min(min).default(fallback),
    )
    .describe(`a number >= ${min}; default ${fallback}`);
}

const flag = z
  .preprocess((value) => (typeof value === "string" ? value.trim().toLowerCase() : value), z.enum(["true", "false", ""]).optional())
  .transform((value) => value === "true");

/**
 * Every setting the Worker and the objects read from their environment, each
 * with its one default. Deployments set only what differs (in `wrangler.toml`
 * [vars] or `.dev.vars`); tests override only what their scenario needs.
 */
/** A comma-separated list; blanks dropped. */
function list(fallback: string) {
  return z
    .string()
    .default(fallback)
    .transform((text) => text.split(",").map((part) => part.trim()).filter((part) => part.length > 0));
}

/** Signature algorithms a key set may use: asymmetric only, so a public key can never serve as an HMAC secret. */
export const ASYMMETRIC_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"] as const;

/** `name=fraction,...`: each standing's share of the standard per-user limits (0.2: a fifth). */
const standingTiers = z
  .string()
  .default("low=0.2")
  .transform((text, ctx) => {
    const tiers: Record<string, number> = {};
    for (const part of text.split(",").map((p) => p.trim()).filter((p) => p.length > 0)) {
      const [name, share] = part.split("=").map((p) => p.trim());
      const value = Number(share);
      if (!name || !(value > 0 && value <= 1)) {
        ctx.addIssue({ code: "custom", message: `"${part}" is not name=fraction with 0 < fraction <= 1` });
        return z.NEVER;
      }
      tiers[name] = value;
    }
    return tiers;
  });

/**
 * How bearer tokens are verified (docs/auth.md): HS256 with shared secrets
 * (AUTH_SECRET, a secret, not here), a JWKS of an identity provider, or both.
 */
const authSettings = {
  /** The identity provider's key set: a URL (cached, refetched on an unknown `kid`) or the keys inline as JSON. */
  AUTH_JWKS_URL: z.string().trim().default(""),
  AUTH_JWKS: z.string().trim().default(""),
  /** A second key set whose tokens are service tokens; when set, the service claim is not used. */
  AUTH_SERVICE_JWKS_URL: z.string().trim().default(""),
  AUTH_SERVICE_JWKS: z.string().trim().default(""),
  /** Algorithms accepted from a key set. */
  AUTH_ALGORITHMS: list("RS256,ES256,EdDSA").pipe(z.array(z.enum(ASYMMETRIC_ALGORITHMS)).min(1)),
  /** Required `iss` and `aud` of key-set tokens (both needed when a key set is configured). */
  AUTH_ISSUER: z.string().trim().default(""),
  AUTH_AUDIENCE: z.string().trim().default(""),
  /** The claim naming the user: a canonical uint64 (a dotted path reaches into objects). */
  AUTH_USER_CLAIM: z.string().trim().min(1).default("sub"),
  /** `claim=value`: a token whose claim is (or, for a list, holds) the value is a service token. */
  AUTH_SERVICE_CLAIM: z.string().trim().regex(/^[^=]+=.+$/, "must be claim=value").default("role=service"),
  /** The claim naming the device, for the per-device limit; empty turns that limit off. */
  AUTH_DEVICE_CLAIM: z.string().trim().default("device_id"),
  /** The claim stating the account's standing, a name from STANDING_TIERS; empty ignores it. */
  AUTH_STANDING_CLAIM: z.string().trim().default("standing"),
  /** Longest life of a grant (X-Plaudit-Grant): an unfollow or a revoked grant takes effect within it. */
  GRANT_MAX_SECONDS: numberVar(3600, 1),
  /** Slack allowed on `nbf` and `iat` for clocks that disagree; `exp` has none. */
  AUTH_CLOCK_SKEW_SECONDS: numberVar(30),
  /** A fetched key set is used this long, then refetched (kept while the provider is down). */
  JWKS_MAX_AGE_SECONDS: numberVar(600),
  /** At most one refetch per this many seconds, however many unknown `kid`s arrive. */
  JWKS_REFETCH_FLOOR_SECONDS: numberVar(30),
  /** Stricter per-user limits by standing: each tier is a share of the standard limits. */
  STANDING_TIERS: standingTiers,
  /** A Cloudflare bot score below this puts the request in BOT_SCORE_STANDING; 0 ignores the score. */
  BOT_SCORE_THRESHOLD: numberVar(30),
  BOT_SCORE_STANDING: z.string().trim().default("low"),
};

export const ConfigSchema = z.object({
  /** Comma-separated origins allowed to call the API from a browser; "*" allows any; empty allows none. */
  CORS_ORIGINS: z.string().default("*"),
  /** Likes and unlikes per user: a bucket refilled over a minute, and one refilled over a day. */
  RATE_LIMIT_PER_MINUTE: numberVar(30),
  RATE_LIMIT_PER_DAY: numberVar(1000),
  /** The same for saves and unsaves, in buckets of their own. */
  SAVE_RATE_LIMIT_PER_MINUTE: numberVar(30),
  SAVE_RATE_LIMIT_PER_DAY: numberVar(1000),
  /** Views and shares per user per minute, held in the user object's memory (a soft limit that costs no write). */
  VIEW_RATE_LIMIT_PER_MINUTE: numberVar(300),
  SHARE_RATE_LIMIT_PER_MINUTE: numberVar(30),
  /** Read cache lifetimes: per-isolate memory, then the location's Cache API. 0 turns a tier off. */
  READ_CACHE_MEMORY_TTL_MS: numberVar(1_000),
  READ_CACHE_EDGE_TTL_MS: numberVar(2_000),
  /**
   * How long a CDN or browser may keep a `GET /v1/counts` answer to a request
   * without a token (the same for everyone); answers to a token are private.
   * Short: the regional store itself lags the objects by a second or two.
   */
  COUNTS_PUBLIC_MAX_AGE_SECONDS: numberVar(2).transform(Math.floor),
  /**
   * How long the Cache API keeps an item's counts as its last-known copy:
   * fresh for READ_CACHE_EDGE_TTL_MS, then served (with X-Stale-Data) only
   * when D1 and the item's object both fail, so a feed still shows numbers.
   */
  LAST_KNOWN_CACHE_SECONDS: numberVar(7 * 86_400, 1),
  /**
   * How long an isolate trusts the item settings and blocks it read from D1:
   * a change made by the host app reaches every isolate within it.
   */
  PRIVACY_CACHE_TTL_MS: numberVar(5_000),
  /**
   * How old item settings a write (like, save, view, share) may still be
   * checked against: past PRIVACY_CACHE_TTL_MS the write uses them and
   * refreshes them after its answer, so a D1 round trip is on a write's path
   * only for an item this isolate has not read within this long.
   */
  PRIVACY_STALE_MS: numberVar(60_000),
  /**
   * Client addresses the per-IP limits never count: by default the loopback
   * addresses, so a local load from one machine measures the service, not the
   * limiter (on Cloudflare a client address is never a loopback one).
   */
  IP_LIMIT_EXEMPT: list("127.0.0.1,::1"),
  /** How long a read waits for the regional store (D1) before it serves what it last knew. */
  READ_STORE_TIMEOUT_MS: numberVar(1_000, 1),
  /**
   * K: how many D1 databases hold the items' counts, bound as DB, DB_1, ...
   * DB_{K-1} (each listed in wrangler.toml); an item's database is a hash of
   * the item modulo K (shared/count-databases.ts).
   * It is the counts' layout until `npm run reshard` first runs; from then on
   * the count_layout row is (docs/reads.md, "Resharding"), and K places only
   * the indexes and the daily history, so it must keep its value: the row
   * records it, and a later change is reported and refused by the reshard
   * (layoutProblems, workers/stores/count-layout.ts). WARNING: never change K
   * itself on a live deployment: most items would then be looked for where
   * they have no row.
   */
  COUNT_DATABASES: numberVar(1, 1).transform(Math.floor),
  /**
   * How long an isolate keeps the count layout (the count_layout row, which
   * `npm run reshard` changes) before reading it again. A read past half the
   * lifetime starts the refresh, so under steady traffic that is one query to
   * DB per isolate per half lifetime, not per feed.
   */
  LAYOUT_TTL_MS: numberVar(5_000),
  /**
   * The least time a reshard phase lasts before the next begins: longer than
   * LAYOUT_TTL_MS plus the longest write that read the layout (a queue batch's
   * D1 writes), so no isolate is ever two phases behind (docs/reads.md).
   */
  RESHARD_GRACE_MS: numberVar(30_000),
  /**
   * Q: how many queues carry the objects' emissions, bound as EVENTS,
   * EVENTS_1, ... EVENTS_{Q-1} (each with its consumer and dead-letter queue
   * in wrangler.toml). One queue takes about 5,000 messages a second; raise Q
   * before that (docs/capacity.md). Safe to change on a live deployment.
   */
  EVENT_QUEUES: numberVar(1, 1).transform(Math.floor),
  /** An item is hot past HOT_WRITES_PER_SEC sustained over HOT_WINDOW_SECONDS; it then writes through HOT_SHARDS children. */
  HOT_WRITES_PER_SEC: numberVar(1000),
  HOT_WINDOW_SECONDS: numberVar(10, 1),
  HOT_SHARDS: numberVar(16, 1).transform(Math.floor),
  /**
   * Predicted splits (docs/hot-items.md): the head also splits when Holt's
   * smoothing of its last HOT_PREDICT_SECONDS one-second write counts
   * forecasts HOT_WRITES_PER_SEC or more over the next hot window, once the
   * last second reached HOT_PREDICT_FLOOR of that rate. 0 seconds turns
   * prediction off (the reactive rule alone).
   */
  HOT_PREDICT_SECONDS: numberVar(5).transform(Math.floor),
  HOT_PREDICT_LEVEL_SMOOTHING: numberVar(0.5).pipe(z.number().gt(0).lte(1)),
  HOT_PREDICT_TREND_SMOOTHING: numberVar(0.5).pipe(z.number().gt(0).lte(1)),
  HOT_PREDICT_FLOOR: numberVar(0.1),
  /**
   * A hot item's N grows fourfold (16, 64, 256, 1,024) once its children
   * have averaged HOT_GROW_WRITES_PER_CHILD each over a hot window, up to
   * HOT_MAX_SHARDS; it never shrinks (docs/hot-items.md).
   */
  HOT_GROW_WRITES_PER_CHILD: numberVar(300),
  HOT_MAX_SHARDS: numberVar(1024, 1).transform(Math.floor),
  /** A hot item cools back to its head under COOL_WRITES_PER_SEC for COOL_WINDOW_SECONDS. */
  COOL_WRITES_PER_SEC: numberVar(100),
  COOL_WINDOW_SECONDS: numberVar(3600, 1),
  /** How often a hot item's child reports its counts to the head while it changes. */
  CHILD_REPORT_MS: numberVar(1_000),
  /**
   * An item's head or child gathers the changes that arrive within this
   * window into one commit: a hot head then commits about 1000 / window
   * times a second whatever its write rate. Delivery waits for it, the
   * like's answer does not.
   */
  ITEM_COMMIT_WINDOW_MS: numberVar(200),
  /** How many edges a hot head hands over to its children per commit. */
  HANDOVER_BATCH: numberVar(200, 1).transform(Math.floor),
  /** How long user objects cache an item's shard map. */
  SHARD_MAP_TTL_MS: numberVar(5_000),
  /** How often an isolate sends the views and shares it gathered to the items. */
  EVENT_FLUSH_MS: numberVar(1_000),
  /** Items whose views and shares an isolate holds at most: one more sends them at once, before EVENT_FLUSH_MS is up. */
  EVENT_BUFFER_ITEMS: numberVar(1_000, 1).transform(Math.floor),
  /**
   * Live counts: sockets are spread over LIVE_HUBS hub objects (each holds at
   * most 32,000), and a hub sends what changed at most once per LIVE_TICK_MS.
   * WARNING: lowering LIVE_HUBS strands the registrations of the hubs dropped
   * until their sockets reconnect; raise it freely.
   */
  LIVE_HUBS: numberVar(64, 1).transform(Math.floor),
  LIVE_TICK_MS: numberVar(250),
  /** "true" lets anyone read GET /metrics (a scraper on a private network); otherwise it needs a service token. */
  METRICS_PUBLIC: flag,
  /** Requests slower than this are logged, one JSON line each. */
  SLOW_REQUEST_MS: numberVar(1_000),
  /**
   * Deadlines on every dependency: a store or an object that accepts a call
   * and never answers must hold neither a request nor a queue consumer.
   */
  D1_TIMEOUT_MS: numberVar(2_000, 1),
  CENTRAL_STORE_TIMEOUT_MS: numberVar(2_000, 1),
  OBJECT_CALL_TIMEOUT_MS: numberVar(5_000, 1),
  QUEUE_SEND_TIMEOUT_MS: numberVar(2_000, 1),
  /** A store's circuit breaker opens after BREAKER_FAILURES failures in a row and lets one probe through after BREAKER_OPEN_MS. */
  BREAKER_FAILURES: numberVar(5, 1).transform(Math.floor),
  BREAKER_OPEN_MS: numberVar(10_000, 1),
  /**
   * Each reconciliation run (cron, every 5 minutes) checks the items changed
   * in the last 15 minutes (at most RECONCILE_RECENT_ITEMS), and keeps a pass
   * over every item ever counted going, paced to take
   * RECONCILE_FULL_PASS_HOURS (docs/pipeline.md: passes over every item).
   */
  RECONCILE_RECENT_ITEMS: numberVar(200).transform(Math.floor),
  RECONCILE_FULL_PASS_HOURS: numberVar(24, 0.01),
  /**
   * Passes over every item (reconciliation's, rebuilds) split the index into
   * at least PASS_RANGES ranges, walk PASS_CONCURRENCY of them at once,
   * PASS_STEP_ITEMS items a queue message, and never ask more than
   * PASS_D1_QUERIES_PER_SECOND of one D1 database nor
   * PASS_CENTRAL_KEYS_PER_SECOND keys read or written in the central store
   * (docs/pipeline.md).
   */
  PASS_RANGES: numberVar(16, 1).transform(Math.floor),
  PASS_CONCURRENCY: numberVar(4, 1).transform(Math.floor),
  PASS_STEP_ITEMS: numberVar(100, 1).transform((n) => Math.min(Math.floor(n), MAX_PASS_STEP_ITEMS)),
  PASS_D1_QUERIES_PER_SECOND: numberVar(100, 0.001),
  PASS_CENTRAL_KEYS_PER_SECOND: numberVar(1_000, 0.001),
  /**
   * Each run that found an item stored within its window also hands the
   * queue's consumers a random sample of RECONCILE_SAMPLE_ITEMS items, at
   * most the index's size (in slices of 100 from random places in the
   * index), and every drifted item it finds sets off a recheck of it and of
   * the RECONCILE_DRIFT_SAMPLE items after it in the index (docs/pipeline.md).
   */
  RECONCILE_SAMPLE_ITEMS: numberVar(10_000).transform(Math.floor),
  RECONCILE_DRIFT_SAMPLE: numberVar(100).transform(Math.floor),
  /**
   * Between those runs, the head of a hot item while it changes or takes
   * writes, and of an item with at least RECHECK_LIKES likes while it
   * changes, has its stores compared with it every RECHECK_INTERVAL_SECONDS
   * (docs/operations.md: the recheck).
   */
  RECHECK_INTERVAL_SECONDS: numberVar(30, 1),
  RECHECK_LIKES: numberVar(100_000),
  /**
   * Import backpressure (docs/import.md): `POST /v1/admin/import` answers 503
   * with a Retry-After while the event queues hold more than this many
   * messages, so an importer never outruns the consumers; and it calls at most
   * IMPORT_USER_CONCURRENCY user objects at once per call.
   */
  IMPORT_MAX_QUEUE_BACKLOG: numberVar(500).transform(Math.floor),
  IMPORT_USER_CONCURRENCY: numberVar(8, 1).transform(Math.floor),
  /** The central store (ScyllaDB's Alternator API); empty turns it off and everything else still works. */
  ALTERNATOR_ENDPOINT: z.string().trim().default(""),
  ALTERNATOR_TABLE_PREFIX: z.string().default("plaudit_"),
  ALTERNATOR_REGION: z.string().default("us-east-1"),
  ...authSettings,
});

export type Config = z.infer<typeof ConfigSchema>;

/** Settings that make sense only together, checked once with the rest. */
function consistent(settings: Config): string[] {
  const problems: string[] = [];
  const keySet = settings.AUTH_JWKS_URL || settings.AUTH_JWKS || settings.AUTH_SERVICE_JWKS_URL || settings.AUTH_SERVICE_JWKS;
  if (keySet && !settings.AUTH_ISSUER) problems.push("AUTH_ISSUER: required when a key set is configured");
  if (keySet && !settings.AUTH_AUDIENCE) problems.push("AUTH_AUDIENCE: required when a key set is configured");
  // An isolate whose layout reads fail keeps its last layout up to RESHARD_GRACE_MS - LAYOUT_TTL_MS (workers/stores/count-layout.ts): that must outlast a normal copy's lifetime.
  if (settings.RESHARD_GRACE_MS <= 2 * settings.LAYOUT_TTL_MS) {
    problems.push(`RESHARD_GRACE_MS: must exceed twice LAYOUT_TTL_MS (${2 * settings.LAYOUT_TTL_MS} ms), so no isolate can fall two reshard phases behind`);
  }
  return problems;
}

const parsed = new WeakMap<object, Config>();

/**
 * The typed settings of an environment, parsed once per `env` object (the
 * runtime hands the same object to every request of an isolate and to an
 * object for its lifetime). A bad value throws, naming the variable.
 */
export function config(env: object): Config {
  const known = parsed.get(env);
  if (known) return known;
  const result = ConfigSchema.safeParse(env);
  const problems = result.success
    ? consistent(result.data)
    : result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
  if (!result.success || problems.length > 0) throw new Error(`invalid configuration: ${problems.join("; ")}`);
  parsed.set(env, result.data);
  return result.data;
}

/** The settings as the runtime hands them over: strings from `wrangler.toml` [vars] or `.dev.vars`, each optional. */
export type ConfigVars = { [K in keyof Config]?: string };
