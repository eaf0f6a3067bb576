import { describe, expect, it } from "vitest";
import { eventQueueBinding, eventQueueIndex, eventQueueName } from "../../shared/event-queues";
import { countDatabaseIndex } from "../../shared/count-databases";

describe("the event queues an item's emissions travel on", () => {
  it("puts fixed items on fixed queues", () => {
    expect([2, 4, 16].map((q) => eventQueueIndex("post:1", q))).toEqual([1, 3, 15]);
    expect([2, 4, 16].map((q) => eventQueueIndex("comment:18446744073709551615", q))).toEqual([1, 3, 3]);
    expect(eventQueueIndex("post:2", 1)).toBe(0);
  });

  it("does not follow the count database: items of one database use both queues", () => {
    const items = Array.from({ length: 200 }, (_, i) => `post:${i}`).filter((item) => countDatabaseIndex(item, 2) === 0);
    expect(new Set(items.map((item) => eventQueueIndex(item, 2)))).toEqual(new Set([0, 1]));
  });

  it("names queue i and its binding as wrangler.toml declares them", () => {
    expect([0, 1, 2].map(eventQueueBinding)).toEqual(["EVENTS", "EVENTS_1", "EVENTS_2"]);
    expect([0, 1, 2].map(eventQueueName)).toEqual(["plaudit-events", "plaudit-events-1", "plaudit-events-2"]);
  });
});
