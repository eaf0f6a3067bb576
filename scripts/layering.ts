// The import direction of the codebase, one way only: pure code in shared/,
// metrics recording in metrics/, the Durable Objects next, the Worker on top.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";

/** Which top-level folders each layer may import from (itself included). */
export const LAYERS: Record<string, readonly string[]> = {
  shared: ["shared"],
  metrics: ["metrics", "shared"],
  "durable-objects": ["durable-objects", "metrics", "shared"],
  workers: ["workers", "durable-objects", "metrics", "shared"],
};

export type Violation = { file: string; imports: string; layer: string; target: string };

/** Relative module specifiers of a source file: imports, type-only imports, re-exports and dynamic imports. */
export function relativeImports(source: string): string[] {
  const found: string[] = [];
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g;
  for (const match of source.matchAll(pattern)) found.push(match[1]!);
  return found;
}

/** The imports in `source` (a file at `file`, relative to the root) that break the layering. */
export function violations(file: string, source: string): Violation[] {
  const layer = file.split("/")[0]!;
  const allowed = LAYERS[layer];
  if (!allowed) return [];
  return relativeImports(source).flatMap((spec) => {
    const target = normalize(join(dirname(file), spec)).split("/")[0]!;
    return allowed.includes(target) ? [] : [{ file, imports: spec, layer, target }];
  });
}

function sources(root: string, dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) return sources(root, path);
    return /\.(ts|mts|js|mjs)$/.test(name) ? [path] : [];
  });
}

/** Every violation under the layered folders of the project at `root`. */
export function checkLayering(root: string): Violation[] {
  return Object.keys(LAYERS).flatMap((layer) =>
    sources(root, layer).flatMap((file) => violations(relative(root, join(root, file)), readFileSync(join(root, file), "utf8"))),
  );
}
