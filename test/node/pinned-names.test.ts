import { describe, expect, it } from "vitest";
import { itemObjectName, shardObjectName, userObjectName } from "../../shared/object-names";
import { childFor, HEAD, homeFor } from "../../shared/placement";

// Values that must never change once deployed: an object's name is its
// identity and childFor says which child holds a user's edge. Each expected
// value is written out, never computed by the code under test.
describe("names and placement that never change", () => {
  it("names a user's object u:<id>, an item's head by its key, and a child <key>#<index>", () => {
    expect(userObjectName("42")).toBe("u:42");
    expect(userObjectName("18446744073709551615")).toBe("u:18446744073709551615");
    expect(itemObjectName("post:7")).toBe("post:7");
    expect(itemObjectName("reel:123")).toBe("reel:123");
    expect(shardObjectName("post:7", 0)).toBe("post:7#0");
    expect(shardObjectName("comment:99", 15)).toBe("comment:99#15");
  });

  it("hashes user ids with 32-bit FNV-1a (the published test vectors)", () => {
    // With 2^32 shards the child is the hash itself.
    expect(childFor("a", 2 ** 32)).toBe(0xe40c292c);
    expect(childFor("foobar", 2 ** 32)).toBe(0xbf9cf968);
    expect(childFor("", 2 ** 32)).toBe(0x811c9dc5);
  });

  it("puts fixed users on fixed children", () => {
    const cases: [string, number, number][] = [
      ["0", 16, 15],
      ["1", 16, 12],
      ["42", 16, 3],
      ["123456789", 16, 12],
      ["18446744073709551615", 16, 4],
      ["42", 4, 3],
      ["987654321", 4, 0],
      ["7", 1, 0],
    ];
    for (const [user, shards, child] of cases) expect(childFor(user, shards)).toBe(child);
  });

  it("homes a new edge at the head (-1) unless the item is hot", () => {
    expect(HEAD).toBe(-1);
    expect(homeFor("42", { hot: false, shards: 16 })).toBe(-1);
    expect(homeFor("42", { hot: true, shards: 16 })).toBe(3);
  });
});
