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
                SAVE_RATE_LIMIT_PER_MINUTE: "30",
                SAVE_RATE_LIMIT_PER_DAY: "1000",
                VIEW_RATE_LIMIT_PER_MINUTE: "300",
                SHARE_RATE_LIMIT_PER_MINUTE: "30",
                READ_CACHE_MEMORY_TTL_MS: "1000",
                READ_CACHE_EDGE_TTL_MS: "2000",
                READ_RATE_LIMIT_PER_IP_PER_MINUTE: "0",
                EVENT_FLUSH_MS: "1000",
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
          // Generous: CI machines have two cores; no test asserts on time.
          testTimeout: 30_000,
          include: ["test/workers/**/*.test.ts"],
          setupFiles: ["./test/workers/setup.ts"],
        },
      },
      {
        // Checks that need Node rather than workerd (tools that compile code at run time, child processes).
        test: {
          name: "node",
          environment: "node",
          include: ["test/node/**/*.test.ts"],
        },
      },
    ],
  },
});
