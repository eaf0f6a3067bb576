import { describe, expect, it } from "vitest";
import { ItemSights } from "../../bench/lib/sights";

describe("the bench's count of items an isolate meets for the first time", () => {
  it("counts, from countFrom on, each item not met within the stale window, once", () => {
    const sights = new ItemSights(60_000);
    sights.meet(["a", "b"], "write", 0);
    sights.countFrom(1_000);
    sights.meet(["a", "c", "c"], "write", 2_000);
    sights.meet(["d"], "write", 59_999);
    expect(sights.stop()).toBe(2);
  });

  it("counts an item met again after the window as a new sight, and nothing while stopped", () => {
    const sights = new ItemSights(60_000);
    sights.meet(["a"], "write", 0);
    sights.countFrom(0);
    sights.meet(["a"], "write", 60_000);
    sights.meet(["a"], "write", 60_001);
    expect(sights.stop()).toBe(1);
    sights.meet(["b"], "write", 200_000);
    sights.countFrom(200_001);
    sights.meet(["b"], "write", 200_002);
    expect(sights.stop()).toBe(0);
  });

  it("makes an item met by a read without counting it, so a write after the read is no first sight", () => {
    const sights = new ItemSights(60_000);
    sights.countFrom(0);
    sights.meet(["a", "b"], "read", 1_000);
    sights.meet(["a"], "write", 2_000);
    sights.meet(["c"], "write", 3_000);
    expect(sights.stop()).toBe(1);
  });
});
