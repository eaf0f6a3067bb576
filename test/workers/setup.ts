import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { countDatabases } from "../../workers/stores/count-databases";

// DB first (it always exists and holds the reconciliation runs), then the other count databases.
for (const db of new Set([env.DB, ...countDatabases(env)])) await applyD1Migrations(db, env.TEST_MIGRATIONS);
