import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { checkLayering, violations } from "../../scripts/layering";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

describe("the import layering", () => {
  it("has no object, metrics or shared module importing from a layer above it", () => {
    expect(checkLayering(root)).toEqual([]);
  });

  it("flags an object that imports from workers/, type-only imports and re-exports included", () => {
    const source = [
      'import { metrics } from "../metrics/recorder";',
      'import type { AppEnv } from "../workers/types";',
      'export { thing } from "../workers/lib/thing";',
      'const lazy = await import("../workers/app");',
    ].join("\n");
    expect(violations("durable-objects/Example.ts", source).map((v) => v.imports)).toEqual([
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
});
