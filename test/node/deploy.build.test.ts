import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const outdir = mkdtempSync(join(tmpdir(), "plaudit-deploy-"));

afterAll(() => rmSync(outdir, { recursive: true, force: true }));

describe("the deploy bundle", () => {
  it("builds with `wrangler deploy --dry-run`, offline, and exports every Durable Object class it binds", () => {
    const run = spawnSync(process.execPath, ["node_modules/wrangler/bin/wrangler.js", "deploy", "--dry-run", "--outdir", outdir], {
      cwd: root,
      encoding: "utf8",
      env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" },
      timeout: 120_000,
    });
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    const bundle = join(outdir, "index.js");
    expect(existsSync(bundle)).toBe(true);

    const classes = [...readFileSync(join(root, "wrangler.toml"), "utf8").matchAll(/^class_name = "(\w+)"/gm)].map((m) => m[1]!);
    expect(classes.length).toBeGreaterThan(0);
    const exported = [...readFileSync(bundle, "utf8").matchAll(/^export \{([^}]*)\}/gm)].flatMap((m) =>
      m[1]!.split(",").map((name) => name.trim().split(/\s+as\s+/).pop()!),
    );
    expect(classes.filter((name) => !exported.includes(name))).toEqual([]);
  });
});
