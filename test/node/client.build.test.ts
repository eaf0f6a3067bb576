import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

// `npm test` builds the client first (pretest: `npm run build:client`).
const dist = resolve(import.meta.dirname, "../../clients/typescript/dist");
const modules = () => readdirSync(dist).filter((f) => f.endsWith(".js"));

describe("the built TypeScript client", () => {
  it("is plain ES modules that import nothing but each other", () => {
    expect(existsSync(dist), "run `npm run build:client`").toBe(true);
    for (const file of modules()) {
      const source = readFileSync(join(dist, file), "utf8");
      const specifiers = [...source.matchAll(/\b(?:import|export)\b[^'"]*?from\s*["']([^"']+)["']/g)].map((m) => m[1]!);
      for (const specifier of specifiers) expect(specifier, file).toMatch(/^\.\/[\w-]+\.js$/);
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
});
