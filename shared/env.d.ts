// Secrets are not in wrangler.toml, so `wrangler types` cannot see them; they
// are added to the generated Env here rather than redeclaring Env.
/** The settings of shared/config.ts, none of them required (each has a default there). */
type PlauditConfigVars = import("./config").ConfigVars;

declare namespace Cloudflare {
  interface Env extends PlauditConfigVars {
    /** Comma-separated HS256 secrets: the first signs, all verify (rotation). */
    AUTH_SECRET: string;
    /** The central store's credentials (Alternator); unset when it is off. */
    ALTERNATOR_ACCESS_KEY_ID?: string;
    ALTERNATOR_SECRET_ACCESS_KEY?: string;
    /** Optional Workers Analytics Engine dataset that also receives metrics (see docs/operations.md). */
    METRICS_ANALYTICS?: AnalyticsEngineDataset;
  }
}
