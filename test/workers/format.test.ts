import { describe, expect, it } from "vitest";
import { formatCount } from "../../shared/format";
import { isCanonicalU64 } from "../../shared/ids";

describe("count_formatted", () => {
  it.each([
    [0, "0"],
    [-3, "0"],
    [12.7, "12"],
    [999, "999"],
    [1000, "1K"],
    [1500, "1.5K"],
    [1999, "1.9K"],
    [123456, "123.4K"],
    [999999, "999.9K"],
    [1000000, "1M"],
    [2500000000, "2.5B"],
    [10 ** 12, "1T"],
    [1999 * 10 ** 12, "1999T"],
  ])("formats %d as %s", (count, expected) => {
    expect(formatCount(count)).toBe(expected);
  });
});

describe("canonical uint64", () => {
  it.each(["0", "7", "18446744073709551615", "10000000000000000000"])("accepts %s", (id) => {
    expect(isCanonicalU64(id)).toBe(true);
  });
  it.each(["", "007", "00", " 7", "7 ", "-1", "+5", "1.5", "1e3", "18446744073709551616", "99999999999999999999", "٣"])(
    "rejects %j",
    (id) => {
      expect(isCanonicalU64(id)).toBe(false);
    },
  );
});
