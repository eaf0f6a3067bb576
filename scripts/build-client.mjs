#!/usr/bin/env node
// Bundles the like button's web component (clients/typescript/src/like.ts) into
// one minified ES module: clients/typescript/dist/plaudit-like.min.js, and a
// copy in public/demo/ for the demo page `npm start` serves. Prints its size
// minified and gzipped, and fails above the 12 KB budget host apps are promised.
// Also bundles the React demo feed (clients/typescript/demo/react-feed.ts, React
// included) into public/demo/react-feed.js. First compiles the typed client
// (tsc -p clients/typescript) into clients/typescript/dist/, unless every
// module there is newer than every source: `npm start` runs this before each
// start, and the compiler takes about three seconds to find nothing to do.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const BUDGET_BYTES = 12 * 1024;

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const client = join(root, "clients", "typescript");
const out = join(client, "dist", "plaudit-like.min.js");

/** True when each source under src/ has its compiled module, and the oldest of those is newer than the newest source and tsconfig. */
function compiled() {
  const sources = readdirSync(join(client, "src"), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
    .map((entry) => relative(join(client, "src"), join(entry.parentPath, entry.name)));
  const modules = sources.map((name) => join(client, "dist", name.replace(/\.ts$/, ".js")));
  const mtime = (path) => statSync(path).mtimeMs;
  try {
    const oldestOutput = Math.min(...modules.map(mtime));
    return oldestOutput > Math.max(...sources.map((name) => mtime(join(client, "src", name))), mtime(join(client, "tsconfig.json")));
  } catch {
    return false;
  }
}

if (!compiled()) {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  // With errors it writes nothing, so a failed build is never taken for an up-to-date one.
  const run = spawnSync(process.execPath, [tsc, "-p", client, "--noEmitOnError"], { stdio: "inherit" });
  if (run.status !== 0) process.exit(run.status ?? 1);
}

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
