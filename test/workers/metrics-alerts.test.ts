import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { Recorder } from "../../metrics/recorder";
import { shardName } from "../../metrics/shards";
import { call, freshId, json, tokenFor } from "./helpers";
import { sample, scrape } from "./metrics-exposition";

let service: string;

beforeAll(async () => {
  service = await tokenFor(freshId(), { role: "service" });
});

/** Sends what `record` records to a metrics shard, as an isolate's flush would. */
async function flush(record: (r: Recorder) => void): Promise<void> {
  const recorder = new Recorder();
  record(recorder);
  const stub = env.METRICS_SHARD.get(env.METRICS_SHARD.idFromName(shardName(0)));
  await stub.merge([{ source: freshId(), seq: 1, series: recorder.take() }]);
}

const alert = async (name: string) => sample(await scrape(service), "plaudit_alert", { name });

describe("alert gauges", () => {
  // Storage is this file's own, and each rule's inputs are recorded only by its own test.
  it("do not fire for a rule without data", async () => {
    const families = await scrape(service);
    expect(sample(families, "plaudit_alert", { name: "consumer_lag" })).toBe(0);
    expect(families.find((f) => f.name === "plaudit_alert_value")!.samples.some((s) => s.labels.name === "consumer_lag")).toBe(false);
  });

  it.each<[string, (r: Recorder) => void]>([
    ["like_latency_p99", (r) => Array.from({ length: 50 }, () => r.observe("request_duration_seconds", { route: "/v1/like", method: "POST" }, 0.3))],
    ["read_latency_p99", (r) => Array.from({ length: 50 }, () => r.observe("request_duration_seconds", { route: "/v1/counts", method: "POST" }, 0.08))],
    ["cache_hit_rate", (r) => (r.count("cache_lookups_total", { cache: "memory", result: "hit" }, 80), r.count("cache_lookups_total", { cache: "memory", result: "miss" }, 20))],
    ["dedup_rate", (r) => (r.count("toggle_outcomes_total", { counter: "likes", outcome: "liked" }, 70), r.count("toggle_outcomes_total", { counter: "likes", outcome: "already_liked" }, 30))],
    ["consumer_lag", (r) => r.gauge("aggregator_lag_seconds", { queue: "events" }, 45)],
    ["drift", (r) => r.gauge("reconciliation_drift_ratio", {}, 0.02)],
    ["hot_items", (r) => r.count("shard_splits_total", {}, 5001)],
    ["error_rate", (r) => (r.count("requests_total", { route: "/v1/like", method: "POST", status: "200" }, 990), r.count("requests_total", { route: "/v1/like", method: "POST", status: "503" }, 10))],
    // Before queue_headroom: both read the messages sent, and this one must start quiet.
    ["consumer_backlog", (r) => (r.count("queue_messages_total", { queue: "q", event: "sent" }, 20_000), r.count("queue_messages_total", { queue: "q", event: "consumed" }, 5_000))],
    ["dead_letters", (r) => r.count("queue_messages_total", { queue: "q-dlq", event: "dead_lettered" }, 1)],
    ["queue_headroom", (r) => r.count("queue_messages_total", { queue: "q", event: "sent" }, 10_000_000)],
    ["d1_query_headroom", (r) => r.count("d1_queries_total", { caller: "/v1/counts", database: "0" }, 10_000_000)],
    ["d1_size_headroom", (r) => r.gauge("d1_database_bytes", { database: "0" }, 9e9)],
    ["objects_overloaded", (r) => r.count("object_overloaded_total", { object: "item_counter" }, 1)],
    ["breaker_open", (r) => r.gauge("circuit_breaker_open", { dependency: "central" }, 1)],
  ])("%s fires once its threshold is crossed", async (name, record) => {
    expect(await alert(name)).toBe(0);
    await flush(record);
    expect(await alert(name)).toBe(1);
  });

  it("are the dashboard's alert states too", async () => {
    const res = await call("GET", "/v1/admin/dashboard.json", { token: service });
    const firing = (await json<{ alerts: Array<{ name: string; firing: boolean }> }>(res)).alerts.filter((a) => a.firing);
    expect(firing.map((a) => a.name)).toContain("drift");
  });
});
