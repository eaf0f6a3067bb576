// Global setup of the files that start a whole server: before any of them,
// the local D1 databases migrated from the current files are kept once
// (scripts/local-d1.mjs), so that every server they start copies them and
// no two of their servers, run side by side, migrate at once.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { hasMigratedCopy, prepareDatabases } from "../../scripts/local-d1.mjs";

const root = resolve(import.meta.dirname, "../..");

export default function setup(): void {
  if (hasMigratedCopy(root)) return;
  const scratch = mkdtempSync(join(tmpdir(), "plaudit-migrated-"));
  try {
    const failed = prepareDatabases(root, join(scratch, "wrangler"));
    if (failed !== null) throw new Error(`the local D1 migrations failed:\n${failed}`);
    // Without it every server would migrate its own databases, side by side.
    if (!hasMigratedCopy(root)) throw new Error(`the migrated local D1 databases could not be kept under ${join(root, ".wrangler", "migrated-d1")}`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
