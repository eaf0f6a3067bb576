import { describe, expect, it } from "vitest";
import { ItemSights } from "../../bench/lib/sights";

describe("the bench's count of items an isolate meets for the first time", () => {
  it("counts, from countFrom on, each item not met within the stale window, once", () => {
    const sights = new ItemSights(60_000);
    sights.meet(["a", "b"], 0);
    sights.countFrom(1_000);
    sights.meet(["a", "c", "c"], 2_000);
    sights.meet(["d"], 59_999);
    expect(sights.stop()).toBe(2);
  });

  it("counts an item met again after the window as a new sight, and nothing while stopped", () => {
    const sights = new ItemSights(60_000);
    sights.meet(["a"], 0);
    sights.countFrom(0);
    sights.meet(["a"], 60_000);
    sights.meet(["a"], 60_001);
    expect(sights.stop()).toBe(1);
    sights.meet(["b"], 200_000);
    sights.countFrom(200_001);
    sights.meet(["b"], 200_002);
    expect(sights.stop()).toBe(0);
  });
});
