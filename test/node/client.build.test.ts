import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatCount } from "../../shared/format";

// `npm test` builds the client first (pretest: `npm run build:client`).
const dist = resolve(import.meta.dirname, "../../clients/typescript/dist");
const BUNDLE = "plaudit-like.min.js";
const modules = () => readdirSync(dist).filter((f) => f.endsWith(".js") && f !== BUNDLE);
/** React is the one import allowed outside the package, and only in its own entry point (an optional peer dependency). */
const allowedImport = (file: string, specifier: string) => /^\.\/[\w-]+\.js$/.test(specifier) || (file === "react.js" && specifier === "react");

describe("the built TypeScript client", () => {
  it("is plain ES modules that import nothing but each other (and React in its own entry)", () => {
    expect(existsSync(dist), "run `npm run build:client`").toBe(true);
    for (const file of modules()) {
      const source = readFileSync(join(dist, file), "utf8");
      const specifiers = [...source.matchAll(/\b(?:import|export)\b[^'"]*?from\s*["']([^"']+)["']/g)].map((m) => m[1]!);
      for (const specifier of specifiers) expect(allowedImport(file, specifier), `${file} imports ${specifier}`).toBe(true);
      expect(source, file).not.toMatch(/\brequire\(/);
    }
  });

  it("ships a type declaration for every module", () => {
    for (const file of modules()) expect(existsSync(join(dist, file.replace(/\.js$/, ".d.ts"))), file).toBe(true);
  });

  it("loads in Node and exports the client and its error class", async () => {
    const client = await import(join(dist, "index.js"));
    expect(typeof client.PlauditClient).toBe("function");
    expect(new client.PlauditError(429, "rate_limited", "slow down", [], 2)).toMatchObject({ status: 429, retryAfter: 2 });
  });

  it("bundles the web component into one module under 12 KB gzipped", () => {
    const bundle = readFileSync(join(dist, BUNDLE));
    // Self-contained: no import statement or dynamic import ("/v1/admin/import" is a path).
    expect(bundle.toString("utf8")).not.toMatch(/(^|[;\s}(])import\s*[("'{*]|\brequire\(/);
    expect(bundle.toString("utf8")).toContain("plaudit-like");
    expect(gzipSync(bundle, { level: 9 }).length).toBeLessThan(12 * 1024);
  });

  it("formats counts exactly as the API's count_formatted", async () => {
    const client = await import(join(dist, "index.js"));
    for (const n of [0, 999, 1000, 1500, 123456, 999999, 1_000_000, 2_500_000_000, 1e12, Number.MAX_SAFE_INTEGER]) {
      expect(client.formatCount(n), String(n)).toBe(formatCount(n));
    }
    fc.assert(fc.property(fc.nat({ max: Number.MAX_SAFE_INTEGER }), (n) => client.formatCount(n) === formatCount(n)));
  });
});
