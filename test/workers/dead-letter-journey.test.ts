import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Emission } from "../../shared/emissions";
import { emitterSends } from "./fault-points";
import { freshId, like, newUser } from "./helpers";
import { central, d1Counts, deliver, itemStub, settled } from "./pipeline-helpers";

/** A central store that refuses every connection: nothing listens on port 9 of 127.0.0.1. */
const CENTRAL_DOWN = { ALTERNATOR_ENDPOINT: "http://127.0.0.1:9" };

describe("a message that keeps failing", () => {
  it("is retried, dead-lettered and dropped, and its changes still reach D1 and the central store, resent by their source", async () => {
    const id = freshId();
    const key = `post:${id}`;
    const item = itemStub(key);
    await runInDurableObject(item, (instance) => {
      emitterSends(instance.emitter).diverts = 1;
      instance.emitter.resendAfterMs = 300;
    });
    const user = await newUser();
    expect((await like(user.token, id)).status).toBe(200);
    const diverted = await expect
      .poll(async () => await runInDurableObject(item, (instance): Emission[] => [...emitterSends(instance.emitter).diverted]), { timeout: 10_000 })
      .toHaveLength(1)
      .then(() => runInDurableObject(item, (instance): Emission[] => [...emitterSends(instance.emitter).diverted]));

    // The consumer's every try fails on the central store, as on a long outage: the message is retried, never acked.
    for (let attempt = 0; attempt < 3; attempt++) {
      expect(await deliver(diverted, CENTRAL_DOWN)).toEqual({ acked: [], retried: ["m0"] });
    }
    // After max_retries the queue hands it to the dead-letter queue, whose consumer counts it and drops it.
    expect(await deliver(diverted, {}, "plaudit-events-dlq")).toEqual({ acked: ["m0"], retried: [] });

    // The item never had that emission acknowledged, so it sends it again, and this time it lands.
    const counts = await settled(key);
    expect(counts.likes).toBe(1);
    expect((await d1Counts(key))?.counts.likes).toBe(1);
    expect((await (await central()).readEdge(user.id, key, "likes"))?.state).toBe(1);
  }, 60_000);
});
