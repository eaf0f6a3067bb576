import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_IN_FLIGHT } from "../../durable-objects/lib/emitter";
import { InFlight } from "../../durable-objects/lib/in-flight";
import { bufferedItems, flushEvents, recordEvent } from "../../workers/likes/event-buffer";
import { freshId } from "./helpers";
import { withVars } from "./idp";

describe("in-memory structures stay within their bounds", () => {
  it("keeps at most MAX_IN_FLIGHT sent emissions per object, the newest, however many go unacknowledged", () => {
    const flights = new InFlight(MAX_IN_FLIGHT, 10 * 60_000);
    const sent = MAX_IN_FLIGHT + 250;
    for (let i = 0; i < sent; i++) {
      flights.add(`e.${i}`, { snapshotSeq: i, edges: [], at: 0 });
      expect(flights.size).toBe(Math.min(i + 1, MAX_IN_FLIGHT));
    }
    expect(flights.take("e.0")).toBeUndefined();
    expect(flights.take(`e.${sent - MAX_IN_FLIGHT - 1}`)).toBeUndefined();
    expect(flights.take(`e.${sent - MAX_IN_FLIGHT}`)?.snapshotSeq).toBe(sent - MAX_IN_FLIGHT);
    expect(flights.take(`e.${sent - 1}`)?.snapshotSeq).toBe(sent - 1);
    expect(flights.size).toBe(MAX_IN_FLIGHT - 2);
  });

  it("holds views for at most EVENT_BUFFER_ITEMS items, sending them early rather than growing, and every view lands", async () => {
    const bound = 5;
    const rt = { env: withVars({ EVENT_BUFFER_ITEMS: String(bound), EVENT_FLUSH_MS: "60000" }), ctx: createExecutionContext() };
    const items = Array.from({ length: bound * 4 + 2 }, () => `post:${freshId()}`);
    for (const item of items) {
      expect(recordEvent(rt, item, "views")).toBe(true);
      expect(bufferedItems()).toBeLessThanOrEqual(bound);
    }
    const unsent = bufferedItems();
    expect(unsent).toBeGreaterThan(0);
    // The full batches went out long before the minute-long flush; the rest goes with the next flush.
    for (const item of items.slice(0, items.length - unsent)) await expect.poll(() => viewsOf(item), { timeout: 10_000 }).toBe(1);
    await flushEvents(rt);
    expect(bufferedItems()).toBe(0);
    for (const item of items) expect(await viewsOf(item)).toBe(1);
  });
});

async function viewsOf(item: string): Promise<number> {
  return (await env.ITEM_COUNTER.get(env.ITEM_COUNTER.idFromName(item)).read()).counts.views;
}
