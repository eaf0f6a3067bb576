import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

export const TEST_SECRETS = "test-secret-primary,test-secret-rotated";

export default defineConfig({
  test: {
    projects: [
      {
        plugins: [
          cloudflareTest(async ({ inject }) => ({
            main: "./workers/index.ts",
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: {
                // Explicit values, so a developer's .dev.vars never changes what tests see.
                AUTH_SECRET: TEST_SECRETS,
                CORS_ORIGINS: "*",
                RATE_LIMIT_PER_MINUTE: "30",
                RATE_LIMIT_PER_DAY: "1000",
                // The central store: the dynalite test/node/dynalite-setup.ts started.
                ALTERNATOR_ENDPOINT: inject("alternatorEndpoint"),
                ALTERNATOR_TABLE_PREFIX: "plaudit_",
                ALTERNATOR_REGION: "us-east-1",
                TEST_MIGRATIONS: await readD1Migrations("./migrations"),
              },
            },
          })),
        ],
        test: {
          name: "workers",
          include: ["test/workers/**/*.test.ts"],
          setupFiles: ["./test/workers/setup.ts"],
          globalSetup: ["./test/node/dynalite-setup.ts"],
        },
      },
    ],
  },
});
