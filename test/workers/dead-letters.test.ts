import { describe, expect, it } from "vitest";
import { freshId, tokenFor } from "./helpers";
import { sample, scrape } from "./metrics-exposition";
import { d1Counts, deliver, headEmission } from "./pipeline-helpers";

describe("the dead-letter queue's consumer", () => {
  it("acknowledges each message on its own, a malformed one included, and writes nothing to the stores", async () => {
    const item = `post:${freshId()}`;
    const result = await deliver([headEmission(item, { seq: 3, counts: { likes: 2 } }), { not: "an emission" }], {}, "plaudit-events-dlq");
    expect(result).toEqual({ acked: ["m0", "m1"], retried: [] });
    expect(await d1Counts(item)).toBeNull();
  });

  it("counts dead-lettered messages for the dead_letters alert", async () => {
    const service = await tokenFor(freshId(), { role: "service" });
    const before = sample(await scrape(service), "plaudit_queue_messages_total", { queue: "plaudit-events-dlq", event: "dead_lettered" });
    await deliver([headEmission(`post:${freshId()}`, { seq: 1 }), headEmission(`post:${freshId()}`, { seq: 1 })], {}, "plaudit-events-dlq");
    await expect
      .poll(async () => sample(await scrape(service), "plaudit_queue_messages_total", { queue: "plaudit-events-dlq", event: "dead_lettered" }), {
        timeout: 10_000,
        interval: 100,
      })
      .toBe(before + 2);
    expect(sample(await scrape(service), "plaudit_alert", { name: "dead_letters" })).toBe(1);
  });
});
