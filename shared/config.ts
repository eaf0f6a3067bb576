import { z } from "zod";

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
  /** Public reads per client IP per minute; 0 turns the limit off. */
  READ_RATE_LIMIT_PER_IP_PER_MINUTE: numberVar(0),
  /** An item is hot past HOT_WRITES_PER_SEC sustained over HOT_WINDOW_SECONDS; it then writes through HOT_SHARDS children. */
  HOT_WRITES_PER_SEC: numberVar(1000),
  HOT_WINDOW_SECONDS: numberVar(10, 1),
  HOT_SHARDS: numberVar(16, 1).transform(Math.floor),
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
  /** "true" lets anyone read GET /metrics (a scraper on a private network); otherwise it needs a service token. */
  METRICS_PUBLIC: flag,
  /** Requests slower than this are logged, one JSON line each. */
  SLOW_REQUEST_MS: numberVar(1_000),
  /** The central store (ScyllaDB's Alternator API); empty turns it off and everything else still works. */
  ALTERNATOR_ENDPOINT: z.string().trim().default(""),
  ALTERNATOR_TABLE_PREFIX: z.string().default("plaudit_"),
  ALTERNATOR_REGION: z.string().default("us-east-1"),
});

export type Config = z.infer<typeof ConfigSchema>;

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
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ");
    throw new Error(`invalid configuration: ${problems}`);
  }
  parsed.set(env, result.data);
  return result.data;
}

/** The settings as the runtime hands them over: strings from `wrangler.toml` [vars] or `.dev.vars`, each optional. */
export type ConfigVars = { [K in keyof Config]?: string };
