import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { overview } from "../../metrics/overview";
import type { MetricsRead } from "../../metrics/protocol";
import { Recorder } from "../../metrics/recorder";
import { mergeAll } from "../../metrics/series";
import { accumulator } from "../../metrics/accumulators";
import { call, freshId, like, newUser, tokenFor } from "./helpers";
import { dashboardData } from "./metrics-exposition";

let service: string;

beforeAll(async () => {
  service = await tokenFor(freshId(), { role: "service" });
});

/** What the metrics objects would answer if they held only what `record` records. */
function readOf(record: (r: Recorder) => void): MetricsRead {
  const recorder = new Recorder();
  record(recorder);
  const series = mergeAll(new Map(), recorder.take());
  return { totals: series, recent: { seconds: 10, series }, alert: { seconds: 300, series } };
}

describe("GET /dashboard", () => {
  it("serves one self-contained page without a token: uPlot inlined, nothing loaded from elsewhere", async () => {
    const res = await call("GET", "/dashboard");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    const page = await res.text();
    expect(page).toContain("https://github.com/leeoniya/uPlot (v1.6.32)");
    expect(page).not.toMatch(/<script[^>]+src=|<link[^>]+href=|\/\*UPLOT_(JS|CSS)\*\//);
  });
});

describe("GET /v1/admin/dashboard.json", () => {
  it("shows likes per second above zero right after likes", async () => {
    const user = await newUser();
    for (let i = 0; i < 3; i++) expect((await like(user.token, freshId())).status).toBe(200);
    const data = await dashboardData(service);
    expect(data.likes_per_second).toBeGreaterThan(0);
    expect(data.write_latency_ms?.p50).toBeGreaterThan(0);
  });

  it("reports no data, not zero, for what nothing has recorded yet", () => {
    const data = overview(readOf(() => {}), []);
    expect({
      lag: data.queue_lag_seconds,
      drift: data.drift_ratio,
      cache: data.cache_hit_rate,
      dedup: data.dedup_rate,
      writes: data.write_latency_ms,
      reads: data.read_latency_ms,
    }).toEqual({ lag: null, drift: null, cache: null, dedup: null, writes: null, reads: null });
  });

  it("reads p50 and p99 from the latency histogram, interpolated inside their buckets", () => {
    // 90 likes in the (3 ms, 4 ms] bucket and 10 in (300 ms, 400 ms]: the median is 50/90 into the first, p99 9/10 into the second.
    const data = overview(
      readOf((r) => {
        for (let i = 0; i < 90; i++) r.observe("request_duration_seconds", { route: "/v1/like", method: "POST" }, 0.0035);
        for (let i = 0; i < 10; i++) r.observe("request_duration_seconds", { route: "/v1/like", method: "POST" }, 0.35);
      }),
      [],
    );
    expect(data.write_latency_ms!.p50).toBeCloseTo(3 + 50 / 90, 9);
    expect(data.write_latency_ms!.p99).toBeCloseTo(390, 9);
    expect(data.read_latency_ms).toBeNull();
  });

  it("lists the ten hottest items reported through their gauges, hottest first, with shard counts", async () => {
    const recorder = new Recorder();
    for (let i = 1; i <= 12; i++) {
      recorder.gauge("hot_item_shards", { item: `post:${i}` }, 16, { ttlSeconds: 60 });
      recorder.gauge("hot_item_writes_per_second", { item: `post:${i}` }, i * 100, { ttlSeconds: 60 });
    }
    const stub = accumulator(env, 5);
    await stub.merge([{ source: freshId(), seq: 1, series: recorder.take() }]);
    const { hot_items } = await dashboardData(service);
    expect(hot_items).toHaveLength(10);
    expect(hot_items[0]).toEqual({ item: "post:12", shards: 16, writes_per_second: 1200 });
    expect(hot_items.at(-1)!.item).toBe("post:3");
  });
});
