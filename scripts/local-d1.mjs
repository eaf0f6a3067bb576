// The local D1 databases of a state folder and the migrations they hold.
//
// A stamp beside the databases names what they were last migrated from (a
// hash of wrangler.toml, of every file in migrations/, the folder every
// database of wrangler.toml names today, and of the local runtime's
// version), written once every migration applied.
// `npm start` skips the migration step (a runtime of its own, about five
// seconds) when it matches: a restart on the same state folder has nothing
// to apply.
//
// A fresh state folder gets a copy of databases migrated from the same files
// before, kept under .wrangler/migrated-d1/<hash>/ from the first fresh
// folder migrated, so a new folder starts as fast as a restart.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The version of the local runtime this project runs (Miniflare's). */
const RUNTIME = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), "..", "node_modules", "miniflare", "package.json"), "utf8")).version;

/** Where wrangler and Miniflare keep a state folder's D1 databases. */
function d1Folder(persistTo) {
  return join(persistTo, "v3", "d1");
}

/** The stamp's file: inside the D1 folder, so removing the databases removes it too. */
function stampFile(persistTo) {
  return join(d1Folder(persistTo), "migrated-from.sha256");
}

function copiesFolder(root) {
  return join(root, ".wrangler", "migrated-d1");
}

/**
 * The hash of wrangler.toml (which databases, which folders), of each
 * migration's name and text, and of the local runtime's version (how it lays
 * the databases out on disk).
 */
export function migrationsHash(root) {
  const hash = createHash("sha256").update(readFileSync(join(root, "wrangler.toml"))).update(RUNTIME);
  const dir = join(root, "migrations");
  for (const name of readdirSync(dir).filter((n) => n.endsWith(".sql")).sort()) hash.update(name).update(readFileSync(join(dir, name)));
  return hash.digest("hex");
}

export function isMigrated(root, persistTo) {
  return stampMatches(persistTo, migrationsHash(root));
}

function stampMatches(persistTo, hash) {
  try {
    return readFileSync(stampFile(persistTo), "utf8") === hash;
  } catch {
    return false;
  }
}

export function markMigrated(root, persistTo) {
  writeFileSync(stampFile(persistTo), migrationsHash(root));
}

/** True when the state folder holds no D1 database yet. */
export function isFresh(persistTo) {
  return !existsSync(d1Folder(persistTo));
}

/**
 * Copies a folder to `to` through a folder beside it, renamed into place: the
 * copy is whole or absent. False when it could not be made (`to` taken, the
 * disk full): a copy here only ever saves time.
 */
function copyWhole(from, to) {
  let incoming;
  try {
    mkdirSync(dirname(to), { recursive: true });
    incoming = mkdtempSync(join(dirname(to), ".incoming-"));
    cpSync(from, incoming, { recursive: true });
    renameSync(incoming, to);
    return true;
  } catch {
    return false;
  } finally {
    if (incoming) rmSync(incoming, { recursive: true, force: true });
  }
}

/**
 * Gives a fresh state folder the kept copy of databases migrated from the
 * files `hash` names; false when there is none (the migrations run
 * instead). A copy cut short leaves the folder fresh, never stamped over
 * missing files.
 */
function copyKept(root, persistTo, hash) {
  const copy = join(copiesFolder(root), hash);
  return existsSync(copy) && copyWhole(copy, d1Folder(persistTo)) && stampMatches(persistTo, hash);
}

/**
 * The state folder needs no migration step: it was migrated from the same
 * files already (a restart), or it is fresh and has just been given a copy of
 * databases migrated from them.
 */
export function readyWithoutMigrating(root, persistTo) {
  const hash = migrationsHash(root);
  return stampMatches(persistTo, hash) || (isFresh(persistTo) && copyKept(root, persistTo, hash));
}

/**
 * Gives a state folder databases migrated from the current files, as `npm
 * start` does before each start: nothing on a restart, a kept copy into a
 * fresh folder, else the migrations (scripts/migrate-local.mjs, a runtime of
 * its own), whose result a fresh folder then keeps for the next. Returns
 * null, or what the migrations printed when they failed.
 */
export function prepareDatabases(root, persistTo, env = process.env) {
  const fresh = isFresh(persistTo);
  if (readyWithoutMigrating(root, persistTo)) return null;
  const run = spawnSync(process.execPath, [join(root, "scripts", "migrate-local.mjs"), persistTo], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    encoding: "utf8",
  });
  if (run.status !== 0) return `${run.stdout}${run.stderr}`;
  if (fresh) keepMigrated(root, persistTo);
  return null;
}

/**
 * Keeps the databases of a state folder just migrated from nothing (before
 * anything else wrote to them) for the next fresh folder, in place of copies
 * from older migrations.
 */
export function keepMigrated(root, persistTo) {
  const hash = migrationsHash(root);
  const copies = copiesFolder(root);
  const copy = join(copies, hash);
  if (!stampMatches(persistTo, hash) || existsSync(copy)) return;
  // Not kept: another start kept the same copy first, or it could not be written.
  if (!copyWhole(d1Folder(persistTo), copy)) return;
  for (const old of readdirSync(copies)) if (old !== hash && !old.startsWith(".incoming-")) rmSync(join(copies, old), { recursive: true, force: true });
}
