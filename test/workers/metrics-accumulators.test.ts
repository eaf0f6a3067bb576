import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import type { FlushBatch } from "../../metrics/protocol";
import { Recorder } from "../../metrics/recorder";
import { accumulator, METRICS_ACCUMULATORS } from "../../metrics/accumulators";
import { call, freshId, like, newUser, tokenFor } from "./helpers";
import { sample, scrape } from "./metrics-exposition";
import { failNext, hold, loseReplies as loseRepliesOf, release } from "./fault-points";

let service: string;

beforeAll(async () => {
  service = await tokenFor(freshId(), { role: "service" });
});

/** A batch as an isolate would flush it, from what `record` puts in a fresh recorder. */
function batch(source: string, seq: number, record: (r: Recorder) => void): FlushBatch {
  const recorder = new Recorder();
  record(recorder);
  return { source, seq, series: recorder.take() };
}

describe("a metrics accumulator", () => {
  it("applies a batch once, however often it is resent", async () => {
    const name = `resent_${freshId()}_total`;
    const sent = batch(freshId(), 1, (r) => r.count(name, {}, 5));
    for (let i = 0; i < 3; i++) await accumulator(env, 2).merge([sent]);
    expect(sample(await scrape(service), `plaudit_${name}`)).toBe(5);
  });

  it("keeps the newest value of a gauge, whichever isolate's batch arrives last", async () => {
    const name = `gauge_${freshId()}`;
    const newer = batch(freshId(), 1, (r) => r.gauge(name, {}, 7));
    const older = { ...batch(freshId(), 1, (r) => r.gauge(name, {}, 3)) };
    older.series = older.series.map((s) => (s.kind === "gauge" ? { ...s, at: s.at - 60_000 } : s));
    await accumulator(env, 1).merge([newer]);
    await accumulator(env, 6).merge([older]);
    expect(sample(await scrape(service), `plaudit_${name}`)).toBe(7);
  });

  it("drops a gauge once its time to live has passed", async () => {
    const name = `expiring_${freshId()}`;
    const expired = batch(freshId(), 1, (r) => r.gauge(name, { item: "post:1" }, 16, { ttlSeconds: 60 }));
    expired.series = expired.series.map((s) => (s.kind === "gauge" ? { ...s, expiresAt: Date.now() - 1 } : s));
    await accumulator(env, 3).merge([expired]);
    expect((await scrape(service)).some((f) => f.name === `plaudit_${name}`)).toBe(false);
  });
});

describe("merging the accumulators", () => {
  it("adds up histograms from isolates on different accumulators bucket by bucket", async () => {
    const name = `merge_${freshId()}_seconds`;
    const labels = { route: "/x" };
    await accumulator(env, 0).merge([batch(freshId(), 1, (r) => [0.0009, 0.004, 0.004].forEach((s) => r.observe(name, labels, s)))]);
    await accumulator(env, METRICS_ACCUMULATORS - 1).merge([batch(freshId(), 1, (r) => [0.004, 0.2, 9].forEach((s) => r.observe(name, labels, s)))]);
    const families = await scrape(service);
    const bucket = (le: string) => sample(families, `plaudit_${name}_bucket`, { ...labels, le });
    expect({ ms1: bucket("0.001"), ms4: bucket("0.004"), ms200: bucket("0.2"), s5: bucket("5"), inf: bucket("+Inf") }).toEqual({
      ms1: 1,
      ms4: 4,
      ms200: 5,
      s5: 5,
      inf: 6,
    });
    expect(sample(families, `plaudit_${name}_count`, labels)).toBe(6);
    expect(sample(families, `plaudit_${name}_sum`, labels)).toBeCloseTo(9.2129, 10);
  });

  it("answers 503 when an accumulator cannot be read, rather than a partial sum", async () => {
    await runInDurableObject(accumulator(env, 4), (instance) => {
      failNext(instance, "read", 1);
    });
    const res = await call("GET", "/metrics", { token: service });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: string }).error).toBe("unavailable");
  });

  it("answers 503 at the deadline when an accumulator hangs, and reads again once it answers", async () => {
    await runInDurableObject(accumulator(env, 5), (instance) => hold(instance, "read"));
    const held = await call("GET", "/metrics", { token: service });
    await runInDurableObject(accumulator(env, 5), (instance) => release(instance, "read"));
    expect(held.status).toBe(503);
    expect(((await held.json()) as { error: string }).error).toBe("unavailable");
    expect((await call("GET", "/metrics", { token: service })).status).toBe(200);
  });

  it("still reads when the accumulators hang on a flush, and counts the flushed requests once they answer", async () => {
    const merges = (held: boolean) =>
      Promise.all(
        Array.from({ length: METRICS_ACCUMULATORS }, (_, i) =>
          runInDurableObject(accumulator(env, i), (instance) => (held ? hold(instance, "merge") : release(instance, "merge"))),
        ),
      );
    const liked = async () => sample(await scrape(service), "plaudit_toggle_outcomes_total", { counter: "likes", outcome: "liked" });
    const before = await liked();
    await merges(true);
    const user = await newUser();
    expect((await like(user.token, freshId())).status).toBe(200);
    // The read flushes first; its flush gives up at the deadline and the read goes on.
    const during = await call("GET", "/metrics", { token: service });
    await merges(false);
    expect(during.status).toBe(200);
    // The held merges then run, and the isolate resends what they carried: each batch applied once.
    await vi.waitFor(async () => expect(await liked()).toBe(before + 1), { timeout: 20_000, interval: 200 });
    expect(await liked()).toBe(before + 1);
  });

  it("counts a flush whose reply was lost once, when the isolate resends it", async () => {
    const before = sample(await scrape(service), "plaudit_toggle_outcomes_total", { counter: "likes", outcome: "liked" });
    const loseReplies = (n: number) =>
      Promise.all(
        Array.from({ length: METRICS_ACCUMULATORS }, (_, i) =>
          runInDurableObject(accumulator(env, i), (instance) => {
            loseRepliesOf(instance, "merge", n);
          }),
        ),
      );
    await loseReplies(1);
    const user = await newUser();
    expect((await like(user.token, freshId())).status).toBe(200);
    await scrape(service);
    const after = sample(await scrape(service), "plaudit_toggle_outcomes_total", { counter: "likes", outcome: "liked" });
    await loseReplies(0);
    expect(after - before).toBe(1);
  });
});
