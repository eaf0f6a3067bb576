import { defineConfig } from "vitest/config";
import { BINDINGS, workerdProject } from "./vitest.config.ts";

/**
 * `npm run test:scale`, run by CI after `npm test`: the passes over every
 * item (test/workers/passes.test.ts) at 20,000 indexed items, each pass
 * killed midway and resumed. Apart from `npm test` because each item's check
 * calls its object, and opening 20,000 objects takes minutes here.
 */
export default defineConfig({
  test: {
    projects: [workerdProject("scale", ["test/workers/passes.test.ts"], { ...BINDINGS, TEST_PASS_ITEMS: "20000" })],
  },
});
