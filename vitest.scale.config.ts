import { defineConfig } from "vitest/config";
import { BINDINGS, workerdProject } from "./vitest.config.ts";

/**
 * `npm run test:scale`: the passes over every item (test/workers/passes.test.ts)
 * at PASS_ITEMS indexed items (20,000 unless set), each pass killed midway and
 * resumed. Apart from `npm test`, which walks 200: each item's check calls its
 * object, and locally every object runs in one workerd thread, so 20,000 take
 * about 9 minutes (docs/pipeline.md, "Passes over every item").
 */
export default defineConfig({
  test: {
    projects: [workerdProject("scale", ["test/workers/passes.test.ts"], { ...BINDINGS, TEST_PASS_ITEMS: process.env.PASS_ITEMS ?? "20000" })],
  },
});
