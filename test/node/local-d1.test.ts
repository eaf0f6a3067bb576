import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isFresh, isMigrated, keepMigrated, markMigrated, migrationsHash, readyWithoutMigrating } from "../../scripts/local-d1.mjs";
import { root } from "./npm-start";

const work = mkdtempSync(join(tmpdir(), "plaudit-local-d1-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A project of its own (wrangler.toml and migrations/), so nothing is written under the repository's .wrangler/. */
function project(name: string): string {
  const dir = join(work, name);
  cpSync(join(root, "migrations"), join(dir, "migrations"), { recursive: true });
  cpSync(join(root, "wrangler.toml"), join(dir, "wrangler.toml"));
  return dir;
}

/** A state folder whose D1 folder holds one database file, as if migrated. */
function migratedState(projectDir: string, name: string): string {
  const state = join(work, name);
  mkdirSync(join(state, "v3", "d1", "miniflare-D1DatabaseObject"), { recursive: true });
  writeFileSync(join(state, "v3", "d1", "miniflare-D1DatabaseObject", "db.sqlite"), "tables");
  markMigrated(projectDir, state);
  return state;
}

describe("the local D1 databases' migrations", () => {
  it("are stamped once every database is migrated, so a restart on the same state folder skips the step", () => {
    const state = join(work, "state");
    expect(isFresh(state)).toBe(true);
    expect(isMigrated(root, state)).toBe(false);
    const run = spawnSync(process.execPath, [join(root, "scripts", "migrate-local.mjs"), state], { cwd: root, encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    expect(isFresh(state)).toBe(false);
    expect(isMigrated(root, state)).toBe(true);
    expect(isMigrated(root, join(work, "another-state"))).toBe(false);
  });

  it("stop matching when a migration is added or changed, or wrangler.toml changes", () => {
    const dir = project("changes");
    const state = migratedState(dir, "changes-state");
    expect(isMigrated(dir, state)).toBe(true);
    writeFileSync(join(dir, "migrations", "9999_new.sql"), "CREATE TABLE t (id INTEGER);\n");
    expect(isMigrated(dir, state)).toBe(false);
    markMigrated(dir, state);
    writeFileSync(join(dir, "migrations", "9999_new.sql"), "CREATE TABLE t (id INTEGER, v TEXT);\n");
    expect(isMigrated(dir, state)).toBe(false);
    markMigrated(dir, state);
    writeFileSync(join(dir, "wrangler.toml"), "# a comment\n", { flag: "a" });
    expect(isMigrated(dir, state)).toBe(false);
  });

  it("are copied into a fresh state folder from one migrated from the same files, and from no other", () => {
    const dir = project("copies");
    const fresh = join(work, "fresh-1");
    expect(readyWithoutMigrating(dir, fresh)).toBe(false);
    expect(isFresh(fresh)).toBe(true);

    keepMigrated(dir, migratedState(dir, "first"));
    expect(readyWithoutMigrating(dir, fresh)).toBe(true);
    expect(isMigrated(dir, fresh)).toBe(true);
    expect(readdirSync(join(fresh, "v3", "d1", "miniflare-D1DatabaseObject"))).toEqual(["db.sqlite"]);

    // A new migration: the old copy no longer serves, and keeping the new one removes it.
    const oldHash = migrationsHash(dir);
    writeFileSync(join(dir, "migrations", "9999_new.sql"), "CREATE TABLE t (id INTEGER);\n");
    expect(readyWithoutMigrating(dir, join(work, "fresh-2"))).toBe(false);
    keepMigrated(dir, migratedState(dir, "second"));
    expect(existsSync(join(dir, ".wrangler", "migrated-d1", oldHash))).toBe(false);
    expect(readdirSync(join(dir, ".wrangler", "migrated-d1"))).toEqual([migrationsHash(dir)]);
    expect(readyWithoutMigrating(dir, join(work, "fresh-3"))).toBe(true);
  });

  it("need no step on a restart, nor on a fresh folder given a copy; a folder migrated from other files needs one", () => {
    const dir = project("ready");
    const restarted = migratedState(dir, "ready-restarted");
    expect(readyWithoutMigrating(dir, restarted)).toBe(true);

    const fresh = join(work, "ready-fresh");
    expect(readyWithoutMigrating(dir, fresh)).toBe(false);
    expect(isFresh(fresh)).toBe(true);
    keepMigrated(dir, restarted);
    expect(readyWithoutMigrating(dir, fresh)).toBe(true);
    expect(isMigrated(dir, fresh)).toBe(true);

    writeFileSync(join(dir, "migrations", "9999_new.sql"), "CREATE TABLE t (id INTEGER);\n");
    expect(readyWithoutMigrating(dir, restarted)).toBe(false);
    expect(readyWithoutMigrating(dir, fresh)).toBe(false);
  });

  it("are never kept from a state folder whose stamp does not match", () => {
    const dir = project("unmatched");
    const state = migratedState(dir, "unmatched-state");
    writeFileSync(join(dir, "migrations", "9999_new.sql"), "CREATE TABLE t (id INTEGER);\n");
    keepMigrated(dir, state);
    expect(existsSync(join(dir, ".wrangler", "migrated-d1"))).toBe(false);
  });
});
