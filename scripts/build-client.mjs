#!/usr/bin/env node
// Bundles the like button's web component (clients/typescript/src/like.ts) into
// one minified ES module: clients/typescript/dist/plaudit-like.min.js, and a
// copy in public/demo/ for the demo page `npm start` serves. Prints its size
// minified and gzipped, and fails above the 12 KB budget host apps are promised.
// Also bundles the React demo feed (clients/typescript/demo/react-feed.ts, React
// included) into public/demo/react-feed.js.
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

export const BUDGET_BYTES = 12 * 1024;

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "clients", "typescript", "dist", "plaudit-like.min.js");

await build({
  entryPoints: [join(root, "clients", "typescript", "src", "like.ts")],
  outfile: out,
  bundle: true,
  minify: true,
  format: "esm",
  target: "es2022",
  legalComments: "none",
  logLevel: "warning",
});
await build({
  entryPoints: [join(root, "clients", "typescript", "demo", "react-feed.ts")],
  outfile: join(root, "public", "demo", "react-feed.js"),
  bundle: true,
  minify: true,
  format: "esm",
  target: "es2022",
  define: { "process.env.NODE_ENV": '"production"' },
  legalComments: "none",
  logLevel: "warning",
});
const code = readFileSync(out);
const gzipped = gzipSync(code, { level: 9 }).length;
mkdirSync(join(root, "public", "demo"), { recursive: true });
copyFileSync(out, join(root, "public", "demo", "plaudit-like.js"));
console.log(`plaudit-like.min.js: ${code.length} bytes minified, ${gzipped} bytes gzipped (budget ${BUDGET_BYTES})`);
if (gzipped > BUDGET_BYTES) {
  console.error(`The web component's bundle is over its ${BUDGET_BYTES}-byte budget.`);
  process.exit(1);
}
