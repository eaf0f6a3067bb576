import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { countDatabases } from "../../workers/stores/count-databases";
import { countDatabaseAt } from "../../workers/stores/count-layout";
import { resetBreakers } from "../../workers/stores/breakers";

// Files of a project that share a runtime (vitest.config.ts) each start with
// every breaker closed, whatever endpoint the file before made fail.
resetBreakers();

// DB first (it always exists and holds the reconciliation runs), then the other count databases
// (every one a reshard may move counts to, in the projects that reshard).
const migrated = Array.from({ length: Number(env.TEST_MIGRATED_DATABASES ?? 0) }, (_, index) => countDatabaseAt(env, index));
for (const db of new Set([env.DB, ...countDatabases(env), ...migrated])) await applyD1Migrations(db, env.TEST_MIGRATIONS);
