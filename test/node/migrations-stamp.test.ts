import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isMigrated, markMigrated } from "../../scripts/migrations-stamp.mjs";
import { root } from "./npm-start";

const work = mkdtempSync(join(tmpdir(), "plaudit-stamp-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("the local migrations' stamp", () => {
  it("is written once every database is migrated, so a restart on the same state folder skips the step", () => {
    const state = join(work, "state");
    expect(isMigrated(root, state)).toBe(false);
    const run = spawnSync(process.execPath, [join(root, "scripts", "migrate-local.mjs"), state], { cwd: root, encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    expect(isMigrated(root, state)).toBe(true);
    expect(isMigrated(root, join(work, "another-state"))).toBe(false);
  });

  it("stops matching when a migration is added or changed, or wrangler.toml changes", () => {
    const project = join(work, "project");
    cpSync(join(root, "migrations"), join(project, "migrations"), { recursive: true });
    cpSync(join(root, "wrangler.toml"), join(project, "wrangler.toml"));
    const state = join(work, "copy-state");
    mkdirSync(join(state, "v3", "d1"), { recursive: true });
    markMigrated(project, state);
    expect(isMigrated(project, state)).toBe(true);

    writeFileSync(join(project, "migrations", "9999_new.sql"), "CREATE TABLE t (id INTEGER);\n");
    expect(isMigrated(project, state)).toBe(false);
    markMigrated(project, state);
    writeFileSync(join(project, "migrations", "9999_new.sql"), "CREATE TABLE t (id INTEGER, v TEXT);\n");
    expect(isMigrated(project, state)).toBe(false);
    markMigrated(project, state);
    writeFileSync(join(project, "wrangler.toml"), "# a comment\n", { flag: "a" });
    expect(isMigrated(project, state)).toBe(false);
  });
});
