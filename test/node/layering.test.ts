import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { checkCycles, checkLayering, checkSqlFloor, importCycles, sqlOffFloor, violations } from "../../scripts/layering";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

describe("the import layering", () => {
  it("has no module importing from a layer, or a part of its layer, above it", () => {
    expect(checkLayering(root)).toEqual([]);
  });

  it("has no import circle", () => {
    expect(checkCycles(root)).toEqual([]);
  });

  it("flags an object that imports from workers/, type-only imports and re-exports included", () => {
    const source = [
      'import { metrics } from "../metrics/recorder";',
      'import type { AppEnv } from "../workers/types";',
      'export { thing } from "../workers/lib/thing";',
      'const lazy = await import("../workers/app");',
    ].join("\n");
    expect(violations("durable-objects/ItemCounter.ts", source).map((v) => v.imports)).toEqual([
      "../workers/types",
      "../workers/lib/thing",
      "../workers/app",
    ]);
  });

  it("keeps shared/ pure and metrics/ below the objects", () => {
    expect(violations("shared/x.ts", 'import { a } from "../metrics/recorder";')).toHaveLength(1);
    expect(violations("metrics/x.ts", 'import { a } from "../durable-objects/lib/emitter";')).toHaveLength(1);
    expect(violations("metrics/x.ts", 'import { a } from "../shared/counters";')).toHaveLength(0);
  });

  it("keeps the stores and the plumbing below the services, and the services below the routes", () => {
    expect(violations("workers/stores/x.ts", 'import { a } from "../reads/count-reader";')).toEqual([
      { file: "workers/stores/x.ts", imports: "../reads/count-reader", layer: "workers/stores", target: "workers/reads" },
    ]);
    expect(violations("workers/lib/x.ts", 'import { a } from "../privacy/grant";')).toHaveLength(1);
    expect(violations("workers/limits/x.ts", 'import type { A } from "../likes/toggle";')).toHaveLength(1);
    expect(violations("workers/reads/x.ts", 'import { a } from "../routes/counts";')).toHaveLength(1);
    expect(violations("workers/reads/x.ts", 'import { a } from "../stores/item-counts";\nimport { b } from "./count-cache";')).toHaveLength(0);
    expect(violations("workers/routes/x.ts", 'import { a } from "../likes/toggle";\nimport { b } from "../types";')).toHaveLength(0);
  });

  it("keeps the objects' lib/ below the object classes, and every file in a part with a rule", () => {
    expect(violations("durable-objects/lib/x.ts", 'import type { A } from "../UserLikes";')).toHaveLength(1);
    expect(violations("durable-objects/UserLikes.ts", 'import { a } from "./lib/emitter";')).toHaveLength(0);
    expect(violations("workers/somewhere/x.ts", 'import { a } from "../../shared/log";')).toHaveLength(1);
  });

  it("keeps every D1 statement of the Worker in workers/stores/", () => {
    expect(checkSqlFloor(root)).toEqual([]);
    expect(sqlOffFloor("workers/pipeline/x.ts", 'await d1(env, db, "x").run(db.prepare("DELETE FROM blocks"));')).toBe(true);
    expect(sqlOffFloor("workers/stores/x.ts", 'await d1(env, db, "x").run(db.prepare("DELETE FROM blocks"));')).toBe(false);
    expect(sqlOffFloor("workers/pipeline/x.ts", 'await deleteBlocksOf(env, user, "x");')).toBe(false);
  });

  it("finds an import circle, a type-only one included", () => {
    const sources = new Map([
      ["durable-objects/lib/a.ts", 'import type { B } from "./b";'],
      ["durable-objects/lib/b.ts", 'import { c } from "./c";'],
      ["durable-objects/lib/c.ts", 'export { a } from "./a";'],
      ["durable-objects/lib/d.ts", 'import { a } from "./a";'],
    ]);
    expect(importCycles(sources)).toEqual([["durable-objects/lib/a.ts", "durable-objects/lib/b.ts", "durable-objects/lib/c.ts", "durable-objects/lib/a.ts"]]);
    sources.set("durable-objects/lib/c.ts", "export const c = 1;");
    expect(importCycles(sources)).toEqual([]);
  });
});
