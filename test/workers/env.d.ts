declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    /** The key-set server of test/node/jwks-setup.ts. */
    TEST_JWKS_SERVER: string;
    /** The never-answering server of test/node/hanging-setup.ts. */
    TEST_HANGING_ENDPOINT: string;
    /** How many count databases the setup migrates beyond COUNT_DATABASES's (the reshard project: every one a reshard may reach). */
    TEST_MIGRATED_DATABASES?: string;
    /** How many items test/workers/passes.test.ts walks (the scale project, vitest.scale.config.ts: 20,000). */
    TEST_PASS_ITEMS?: string;
  }
}
