import { config } from "../../shared/config";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { breakerFor } from "../../workers/stores/breakers";
import { freshId } from "./helpers";
import { central, d1Counts, deliver, headEmission } from "./pipeline-helpers";

const key = () => `post:${freshId()}`;

/** The central store hangs: every call is cut off at its deadline, and the breaker opens after two failures. */
const HANGING = {
  ALTERNATOR_ENDPOINT: env.TEST_HANGING_ENDPOINT,
  CENTRAL_STORE_TIMEOUT_MS: "100",
  BREAKER_FAILURES: "2",
  BREAKER_OPEN_MS: "200",
} as unknown as Partial<Env>;
/**
 * The store at its own endpoint, with the same breaker settings. Its calls get
 * the default deadline: the tests' one store serves several files at once, and
 * a call it answers in more than 100 ms is no failure of what is tested here.
 */
const RECOVERED = { ...HANGING, ALTERNATOR_ENDPOINT: env.ALTERNATOR_ENDPOINT, CENTRAL_STORE_TIMEOUT_MS: undefined } as Partial<Env>;
const hangingBreaker = () => breakerFor(env, { dependency: "central_store", endpoint: env.TEST_HANGING_ENDPOINT });
const storeBreaker = () => breakerFor(env, { dependency: "central_store", endpoint: config(env).ALTERNATOR_ENDPOINT });

describe("a central store that hangs", () => {
  it("opens its breaker while D1 keeps being written, and after recovery every store is exact", async () => {
    const [a, b] = [key(), key()];
    const first = await deliver([headEmission(a, { seq: 1, counts: { likes: 3 } })], HANGING);
    expect(first).toEqual({ acked: [], retried: ["m0"] });
    expect(hangingBreaker().state).not.toBe("closed");
    expect((await d1Counts(a))?.counts.likes).toBe(3);

    // With the breaker open the consumer does not wait on the store: D1 is still written, the message retried.
    const second = await deliver([headEmission(b, { seq: 2, counts: { likes: 5 } })], HANGING);
    expect(second).toEqual({ acked: [], retried: ["m0"] });
    expect((await d1Counts(b))?.counts.likes).toBe(5);

    // The redeliveries, to a store that answers: both items land.
    const redelivered = [headEmission(a, { seq: 1, counts: { likes: 3 } }), headEmission(b, { seq: 2, counts: { likes: 5 } })];
    await vi.waitFor(async () => expect(await deliver(redelivered, RECOVERED)).toEqual({ acked: ["m0", "m1"], retried: [] }), {
      timeout: 10_000,
      interval: 100,
    });
    expect(storeBreaker().state).toBe("closed");
    const store = await central();
    for (const [item, seq, likes] of [[a, 1, 3], [b, 2, 5]] as const) {
      expect((await store.readCounts(item))?.counts.likes).toBe(likes);
      expect(await d1Counts(item)).toMatchObject({ seq, counts: { likes } });
    }
  });

  it("opens the breaker of its own endpoint only: another endpoint's calls go on", async () => {
    const tripped = key();
    for (let i = 0; i < 2; i++) expect(await deliver([headEmission(tripped, { seq: 1, counts: { likes: 1 } })], HANGING)).toEqual({ acked: [], retried: ["m0"] });
    expect(hangingBreaker().state).not.toBe("closed");
    expect(storeBreaker().state).toBe("closed");

    // The same dependency at another endpoint (the real store), with the same settings, while the hanging one's breaker is open.
    const item = key();
    expect(await deliver([headEmission(item, { seq: 1, counts: { likes: 2 } })], RECOVERED)).toEqual({ acked: ["m0"], retried: [] });
    expect((await (await central()).readCounts(item))?.counts.likes).toBe(2);
    expect(storeBreaker().state).toBe("closed");
    expect(hangingBreaker().state).not.toBe("closed");
  });
});
