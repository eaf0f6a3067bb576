// The import direction of the codebase, one way only: pure code in shared/,
// metrics recording in metrics/, the Durable Objects next, the Worker on top;
// inside workers/ and durable-objects/, plumbing and stores below the services
// and the services below the routes.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";

/** Which top-level folders each layer may import from (itself included). */
export const LAYERS: Record<string, readonly string[]> = {
  shared: ["shared"],
  metrics: ["metrics", "shared"],
  "durable-objects": ["durable-objects", "metrics", "shared"],
  workers: ["workers", "durable-objects", "metrics", "shared"],
};

/**
 * Inside a layer, which parts each part may import from (itself included). A
 * part is a sub-folder, or a file at the layer's root (named by its file
 * name without extension). Every file of a layer with rules belongs to a
 * part named here.
 */
export const PARTS: Record<string, Record<string, readonly string[]>> = {
  "durable-objects": {
    lib: [],
    ItemCounter: ["lib"],
    ItemShard: ["lib"],
    LiveHub: ["lib"],
    MetricsAccumulator: ["lib"],
    UserLikes: ["lib"],
  },
  workers: {
    /** The Hono environment's type. */
    types: [],
    /** Errors, request validation, calls to the objects. */
    lib: [],
    /** Every store's SQL and calls: D1 (counts, history, settings), the central store, their breakers. */
    stores: [],
    auth: ["lib"],
    limits: ["lib", "types"],
    privacy: ["lib", "stores", "auth"],
    metrics: ["lib", "types"],
    /** The read services: counts, history, their caches. */
    reads: ["lib", "stores", "privacy", "types"],
    /** The write services: toggles, kept intents, buffered events. */
    likes: ["lib", "stores", "privacy", "limits", "reads", "types"],
    /** The queue consumers (events, the drain of kept intents) and the operator jobs; the live publisher reads items' settings. */
    pipeline: ["lib", "stores", "privacy", "likes"],
    middleware: ["lib", "auth", "privacy", "limits", "metrics", "types"],
    openapi: ["limits"],
    routes: ["lib", "stores", "auth", "privacy", "limits", "metrics", "reads", "likes", "pipeline", "middleware", "openapi", "types", "dashboard", "live"],
    /** The Worker's entry points. */
    app: ["lib", "metrics", "middleware", "routes", "types"],
    scheduled: ["likes", "pipeline"],
    index: ["app", "pipeline", "scheduled"],
  },
};

export type Violation = { file: string; imports: string; layer: string; target: string };

/** Relative module specifiers of a source file: imports, type-only imports, re-exports and dynamic imports. */
export function relativeImports(source: string): string[] {
  const found: string[] = [];
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g;
  for (const match of source.matchAll(pattern)) found.push(match[1]!);
  return found;
}

/** The part of its layer a path (relative to the root) lies in: its sub-folder, or its file name at the layer's root. */
function partOf(path: string): string {
  const segments = path.split("/");
  return segments.length > 2 ? segments[1]! : segments[1]!.replace(/\.[^.]+$/, "");
}

/** The imports in `source` (a file at `file`, relative to the root) that break the layering. */
export function violations(file: string, source: string): Violation[] {
  const layer = file.split("/")[0]!;
  const allowed = LAYERS[layer];
  if (!allowed) return [];
  const parts = PARTS[layer];
  const part = partOf(file);
  if (parts && !parts[part]) return [{ file, imports: "", layer: `${layer}/${part}`, target: "a part with no rule" }];
  return relativeImports(source).flatMap((spec) => {
    const path = normalize(join(dirname(file), spec));
    const target = path.split("/")[0]!;
    if (!allowed.includes(target)) return [{ file, imports: spec, layer, target }];
    if (!parts || target !== layer) return [];
    const targetPart = partOf(path);
    if (targetPart === part || parts[part]!.includes(targetPart)) return [];
    return [{ file, imports: spec, layer: `${layer}/${part}`, target: `${layer}/${targetPart}` }];
  });
}

/** The source files under `dir` (relative to `root`), as paths relative to `root`. */
export function sources(root: string, dir: string): string[] {
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

/** The folder of the Worker that alone holds D1 statements: a query elsewhere in workers/ is a store's SQL out of its floor. */
const SQL_FLOOR = "workers/stores/";

/** Whether `source`, a file at `file` (relative to the root), prepares a D1 statement outside workers/stores/. */
export function sqlOffFloor(file: string, source: string): boolean {
  return file.startsWith("workers/") && !file.startsWith(SQL_FLOOR) && /\.prepare\s*\(/.test(source);
}

/** Every file of workers/ outside workers/stores/ that prepares a D1 statement. */
export function checkSqlFloor(root: string): string[] {
  return sources(root, "workers").filter((file) => sqlOffFloor(file, readFileSync(join(root, file), "utf8")));
}

/** The source file a relative specifier names, if it is one of `files`. */
function resolveImport(file: string, spec: string, files: ReadonlySet<string>): string | undefined {
  const base = normalize(join(dirname(file), spec));
  return [base, `${base}.ts`, base.replace(/\.js$/, ".ts"), join(base, "index.ts")].find((candidate) => files.has(candidate));
}

/** Import circles among the given sources (path → text), each as the files around it, the first repeated last. */
export function importCycles(sourcesByFile: ReadonlyMap<string, string>): string[][] {
  const files = new Set(sourcesByFile.keys());
  const edges = new Map(
    [...sourcesByFile].map(([file, source]) => [
      file,
      relativeImports(source).flatMap((spec) => resolveImport(file, spec, files) ?? []),
    ]),
  );
  const cycles: string[][] = [];
  const done = new Set<string>();
  const onPath: string[] = [];
  const visit = (file: string) => {
    if (done.has(file)) return;
    const at = onPath.indexOf(file);
    if (at >= 0) {
      cycles.push([...onPath.slice(at), file]);
      return;
    }
    onPath.push(file);
    for (const next of edges.get(file) ?? []) visit(next);
    onPath.pop();
    done.add(file);
  };
  for (const file of [...files].sort()) visit(file);
  return cycles;
}

/** Every import circle under the layered folders of the project at `root`. */
export function checkCycles(root: string): string[][] {
  const files = Object.keys(LAYERS)
    .filter((layer) => existsSync(join(root, layer)))
    .flatMap((layer) => sources(root, layer));
  return importCycles(new Map(files.map((file) => [file, readFileSync(join(root, file), "utf8")])));
}
