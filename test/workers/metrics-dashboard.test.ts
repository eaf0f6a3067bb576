import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { Recorder } from "../../metrics/recorder";
import { shardName } from "../../metrics/shards";
import { call, freshId, like, newUser, tokenFor } from "./helpers";
import { dashboardData } from "./metrics-exposition";

let service: string;

beforeAll(async () => {
  service = await tokenFor(freshId(), { role: "service" });
});

const overview = () => dashboardData(service);

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
  // First in the file: a like reads its item's count, which records a cache lookup.
  it("reports no data, not zero, for what nothing has recorded yet", async () => {
    const data = await overview();
    expect({ lag: data.queue_lag_seconds, drift: data.drift_ratio, cache: data.cache_hit_rate }).toEqual({
      lag: null,
      drift: null,
      cache: null,
    });
  });

  it("shows likes per second above zero right after likes", async () => {
    const user = await newUser();
    for (let i = 0; i < 3; i++) expect((await like(user.token, freshId())).status).toBe(200);
    const data = await overview();
    expect(data.likes_per_second).toBeGreaterThan(0);
    expect(data.write_latency_ms!.p99).toBeGreaterThanOrEqual(data.write_latency_ms!.p50);
  });

  it("lists the ten hottest items reported through their gauges, hottest first, with shard counts", async () => {
    const recorder = new Recorder();
    for (let i = 1; i <= 12; i++) {
      recorder.gauge("hot_item_shards", { item: `post:${i}` }, 16, { ttlSeconds: 60 });
      recorder.gauge("hot_item_writes_per_second", { item: `post:${i}` }, i * 100, { ttlSeconds: 60 });
    }
    const stub = env.METRICS_SHARD.get(env.METRICS_SHARD.idFromName(shardName(5)));
    await stub.merge([{ source: freshId(), seq: 1, series: recorder.take() }]);
    const { hot_items } = await overview();
    expect(hot_items).toHaveLength(10);
    expect(hot_items[0]).toEqual({ item: "post:12", shards: 16, writes_per_second: 1200 });
    expect(hot_items.at(-1)!.item).toBe("post:3");
  });
});
