// Applies the D1 migrations to every local database of wrangler.toml, as
// `wrangler d1 migrations apply <binding> --local --persist-to <dir>` does
// (same files, same d1_migrations table, one batch per migration), but in one
// runtime for all databases: wrangler starts a runtime for each migration,
// about 30 CPU seconds for four fresh databases, where this takes about five.
// Run as its own process (`node scripts/migrate-local.mjs <persist dir>`):
// loading wrangler's module installs its own SIGINT and SIGTERM handlers.
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { unstable_readConfig, unstable_splitSqlQuery } from "wrangler";
import { markMigrated } from "./local-d1.mjs";

const DEFAULT_TABLE = "d1_migrations";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Applies what is missing to each D1 database of wrangler.toml. */
async function applyLocalMigrations(persistTo) {
  const config = unstable_readConfig({ config: join(root, "wrangler.toml") }, { hideWarnings: true });
  const databases = config.d1_databases;
  const mf = new Miniflare({
    modules: true,
    script: "export default {}",
    // Where `wrangler dev --persist-to` and `wrangler d1 ... --persist-to` keep D1.
    d1Persist: join(persistTo, "v3", "d1"),
    d1Databases: Object.fromEntries(databases.map((d) => [d.binding, d.preview_database_id ?? d.database_id])),
  });
  try {
    for (const database of databases) {
      const db = await mf.getD1Database(database.binding);
      const table = database.migrations_table || DEFAULT_TABLE;
      const dir = join(root, database.migrations_dir || "migrations");
      await db
        .prepare(
          `CREATE TABLE IF NOT EXISTS ${table}(
		id         INTEGER PRIMARY KEY AUTOINCREMENT,
		name       TEXT UNIQUE,
		applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
);`,
        )
        .run();
      const done = new Set((await db.prepare(`SELECT name FROM ${table}`).all()).results.map((row) => row.name));
      const missing = readdirSync(dir)
        .filter((name) => name.endsWith(".sql") && !done.has(name))
        .sort();
      for (const name of missing) {
        const sql = `${readFileSync(join(dir, name), "utf8")}\nINSERT INTO ${table} (name) values ('${name}');\n`;
        try {
          await db.batch(unstable_splitSqlQuery(sql).map((query) => db.prepare(query)));
        } catch (error) {
          throw new Error(`Migration ${name} failed on ${database.binding}: ${error?.cause?.message ?? error?.message ?? error}`);
        }
      }
    }
  } finally {
    await mf.dispose();
  }
}

try {
  const persistTo = resolve(process.argv[2]);
  await applyLocalMigrations(persistTo);
  markMigrated(root, persistTo);
} catch (error) {
  console.error(error?.message ?? error);
  process.exit(1);
}
