// What the local D1 databases were last migrated from: a hash of wrangler.toml
// and of every file in migrations/ (the folder each database of wrangler.toml
// names), written beside the databases once every migration applied. `npm
// start` skips the migration step (a runtime of its own, about five seconds)
// when it matches: a restart on the same state folder has nothing to apply.
import { createHash } from "node:crypto";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The stamp's file: inside the D1 folder, so removing the databases removes it too. */
function stampFile(persistTo) {
  return join(persistTo, "v3", "d1", "migrated-from.sha256");
}

/** The hash of wrangler.toml (which databases, which folders) and of each migration's name and text. */
export function migrationsHash(root) {
  const hash = createHash("sha256").update(readFileSync(join(root, "wrangler.toml")));
  const dir = join(root, "migrations");
  for (const name of readdirSync(dir).filter((n) => n.endsWith(".sql")).sort()) hash.update(name).update(readFileSync(join(dir, name)));
  return hash.digest("hex");
}

export function isMigrated(root, persistTo) {
  try {
    return readFileSync(stampFile(persistTo), "utf8") === migrationsHash(root);
  } catch {
    return false;
  }
}

export function markMigrated(root, persistTo) {
  writeFileSync(stampFile(persistTo), migrationsHash(root));
}
