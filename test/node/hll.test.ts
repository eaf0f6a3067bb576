import { describe, expect, it } from "vitest";
import { HLL_PRECISION, HyperLogLog } from "../../shared/hll";

/** Deterministic synthetic user ids: a 32-bit xorshift stream from a fixed seed, written as decimal uint64 text. */
function* syntheticIds(count: number, seed: number): Generator<string> {
  let x = seed >>> 0;
  for (let i = 0; i < count; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    // The index keeps ids distinct even when the stream repeats a value.
    yield `${i}${(x % 1000).toString().padStart(3, "0")}`;
  }
}

function sketchOf(ids: Iterable<string>): HyperLogLog {
  const sketch = new HyperLogLog();
  for (const id of ids) sketch.add(id);
  return sketch;
}

const relativeError = (estimate: number, exact: number) => Math.abs(estimate - exact) / exact;

describe("HyperLogLog", () => {
  it("has a standard error of at most 1 %", () => {
    expect(1.04 / Math.sqrt(2 ** HLL_PRECISION)).toBeLessThanOrEqual(0.01);
  });

  it("estimates 0 when empty", () => {
    expect(new HyperLogLog().estimate()).toBe(0);
  });

  for (const exact of [1_000, 100_000, 1_000_000]) {
    it(`estimates ${exact.toLocaleString("en")} distinct ids within 2 %`, () => {
      const estimate = sketchOf(syntheticIds(exact, 0x2545f491)).estimate();
      expect(relativeError(estimate, exact)).toBeLessThan(0.02);
    });
  }

  it("does not move when the same ids are added again", () => {
    const ids = [...syntheticIds(5_000, 7)];
    const sketch = sketchOf(ids);
    const before = sketch.estimate();
    const registers = sketch.registers.slice();
    for (let round = 0; round < 3; round++) for (const id of ids) expect(sketch.add(id)).toBe(false);
    expect(sketch.estimate()).toBe(before);
    expect(sketch.registers).toEqual(registers);
  });

  it("merges sketches of overlapping sets into the sketch of their union", () => {
    const ids = [...syntheticIds(200_000, 11)];
    // Four "isolates" see overlapping quarters of the viewers.
    const parts = [0, 1, 2, 3].map((p) => sketchOf(ids.slice(p * 50_000, Math.min(ids.length, (p + 1) * 50_000 + 10_000))));
    const merged = new HyperLogLog();
    for (const part of parts) merged.merge(part);
    expect(merged.registers).toEqual(sketchOf(ids).registers);
    expect(relativeError(merged.estimate(), ids.length)).toBeLessThan(0.02);
    expect(merged.merge(parts[0]!)).toBe(false);
  });

  it("refuses to merge a sketch of another size", () => {
    const foreign = Object.create(HyperLogLog.prototype) as HyperLogLog;
    Object.defineProperty(foreign, "registers", { value: new Uint8Array(1024) });
    expect(() => new HyperLogLog().merge(foreign)).toThrow(/different sizes/);
    expect(() => new HyperLogLog(new Uint8Array(1024))).toThrow(RangeError);
  });

  it("serializes sparse while few registers are set, dense beyond, and reads both back", () => {
    const small = sketchOf(syntheticIds(100, 3));
    const smallBytes = small.serialize();
    expect(smallBytes.length).toBeLessThanOrEqual(2 + 3 * 100);
    expect(HyperLogLog.deserialize(smallBytes).registers).toEqual(small.registers);

    const large = sketchOf(syntheticIds(50_000, 5));
    const largeBytes = large.serialize();
    expect(largeBytes.length).toBe(2 + 2 ** HLL_PRECISION);
    expect(HyperLogLog.deserialize(largeBytes).estimate()).toBe(large.estimate());
  });

  it("refuses damaged or foreign buffers", () => {
    expect(() => HyperLogLog.deserialize(new Uint8Array([2, 12]))).toThrow(/precision 12/);
    expect(() => HyperLogLog.deserialize(new Uint8Array([2, HLL_PRECISION, 0, 1]))).toThrow(/not a serialized sketch/);
    expect(() => HyperLogLog.deserialize(new Uint8Array([2, HLL_PRECISION, 0, 1, 99]))).toThrow(/impossible rank/);
  });
});
