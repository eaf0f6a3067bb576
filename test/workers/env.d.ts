declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    /** The key-set server of test/node/jwks-setup.ts. */
    TEST_JWKS_SERVER: string;
    /** The never-answering server of test/node/hanging-setup.ts. */
    TEST_HANGING_ENDPOINT: string;
  }
}
