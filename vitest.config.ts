import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { textModules } from "./scripts/text-modules.ts";

export const TEST_SECRETS = "test-secret-primary,test-secret-rotated";

export default defineConfig({
  test: {
    projects: [
      {
        plugins: [
          cloudflareTest(async () => ({
            main: "./workers/index.ts",
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: {
                // Explicit values, so a developer's .dev.vars never changes what tests see.
                AUTH_SECRET: TEST_SECRETS,
                CORS_ORIGINS: "*",
                RATE_LIMIT_PER_MINUTE: "30",
                RATE_LIMIT_PER_DAY: "1000",
                // A busy test machine makes many requests "slow"; the slow-request log has its own test.
                SLOW_REQUEST_MS: "60000",
                TEST_MIGRATIONS: await readD1Migrations("./migrations"),
              },
            },
          })),
          textModules(),
        ],
        test: {
          name: "workers",
          include: ["test/workers/**/*.test.ts"],
          setupFiles: ["./test/workers/setup.ts"],
        },
      },
      {
        // Plain Node: tests that start `npm start` themselves and kill it (the dashboard in a real browser).
        test: {
          name: "node",
          include: ["test/node/**/*.test.ts"],
          environment: "node",
        },
      },
    ],
  },
});
