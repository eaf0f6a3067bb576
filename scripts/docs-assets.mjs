#!/usr/bin/env node
// Copies Swagger UI from node_modules into public/docs/vendor/, the static
// assets the Worker serves for GET /docs. Runs on `npm install` (postinstall),
// so a clean clone needs no network beyond the npm registry. The copies are
// git-ignored: node_modules pins them.
import { copyFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const FILES = ["swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png", "LICENSE", "NOTICE"];

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const source = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
const target = join(root, "public", "docs", "vendor");
mkdirSync(target, { recursive: true });
for (const file of FILES) copyFileSync(join(source, file), join(target, file));
