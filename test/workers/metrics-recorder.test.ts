import { afterEach, describe, expect, it, vi } from "vitest";
import { renderExposition } from "../../metrics/exposition";
import { quantile } from "../../metrics/histogram";
import { Recorder } from "../../metrics/recorder";
import { mergeAll } from "../../metrics/series";
import { parseExposition, sample } from "./metrics-exposition";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the in-isolate recorder", () => {
  it("adds counts for one label set into one series, whatever the label order", () => {
    const r = new Recorder();
    r.count("x_total", { a: "1", b: "2" });
    r.count("x_total", { b: "2", a: "1" }, 4);
    expect(r.take()).toEqual([{ kind: "counter", name: "plaudit_x_total", labels: { a: "1", b: "2" }, value: 5 }]);
  });

  it("refuses a name already used with another kind, and warns once", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const r = new Recorder();
    r.count("mixed_total");
    r.gauge("mixed_total", {}, 3);
    r.gauge("mixed_total", {}, 4);
    expect(r.take().map((s) => s.kind)).toEqual(["counter"]);
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it("refuses a counter's label set as a histogram, however often it is asked, and keeps counting it", () => {
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const r = new Recorder();
    r.count("both_total", { a: "1" });
    r.observe("both_total", { a: "1" }, 0.5);
    r.observe("both_total", { a: "1" }, 0.5);
    r.count("both_total", { a: "1" }, 2);
    expect(r.take()).toEqual([{ kind: "counter", name: "plaudit_both_total", labels: { a: "1" }, value: 3 }]);
  });

  it("refuses label names Prometheus cannot read or reserves", () => {
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const r = new Recorder();
    r.count("a_total", { "bad-name": "x" });
    r.observe("b_seconds", { le: "1" }, 0.5);
    expect(r.take()).toEqual([]);
  });

  it("puts an observation on a bucket's bound into that bucket", () => {
    const r = new Recorder();
    r.observe("t_seconds", {}, 0.1);
    const [h] = r.take();
    expect(h!.kind === "histogram" && quantile(h!, 1)).toBe(0.1);
  });

  it("counts each of many label sets into its own series, past the lookups it keeps, in every batch", () => {
    const r = new Recorder();
    for (let batch = 0; batch < 2; batch++) {
      for (let pass = 0; pass < 2; pass++) for (let i = 0; i < 12_000; i++) r.count("many_total", { caller: "c", v: String(i) }, i);
      const taken = r.take();
      expect(taken.length).toBe(12_000);
      expect(taken.every((s) => s.kind === "counter" && s.value === 2 * Number(s.labels.v))).toBe(true);
    }
  });

  it("starts over after take(): each batch holds only what came after the last", () => {
    const r = new Recorder();
    r.count("y_total");
    r.take();
    expect(r.idle).toBe(true);
    r.count("y_total");
    expect(r.take()).toEqual([{ kind: "counter", name: "plaudit_y_total", labels: {}, value: 1 }]);
  });
});

describe("the exposition", () => {
  it("escapes quotes, backslashes and newlines in label values, which read back unchanged", () => {
    const r = new Recorder();
    const odd = 'say "hi"\\now\nthen';
    r.count("odd_total", { v: odd }, 2);
    const families = parseExposition(renderExposition(mergeAll(new Map(), r.take()), []));
    expect(sample(families, "plaudit_odd_total", { v: odd })).toBe(2);
  });
});

describe("histogram quantiles", () => {
  it("interpolate inside the bucket like Prometheus' histogram_quantile", () => {
    const r = new Recorder();
    for (let i = 0; i < 4; i++) r.observe("q_seconds", {}, 0.09);
    const [h] = r.take();
    // Four observations in (0.08, 0.1]: the median is halfway through that bucket.
    expect(h!.kind === "histogram" && quantile(h!, 0.5)).toBeCloseTo(0.09, 10);
  });
});
