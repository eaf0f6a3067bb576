import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { evaluateAlerts } from "../../metrics/alerts";
import { Recorder } from "../../metrics/recorder";
import { accumulator } from "../../metrics/accumulators";
import { call, freshId, json, tokenFor } from "./helpers";
import { sample, scrape } from "./metrics-exposition";

let service: string;

beforeAll(async () => {
  service = await tokenFor(freshId(), { role: "service" });
});

/** Sends what `record` records to a metrics accumulator, as an isolate's flush would. */
async function flush(record: (r: Recorder) => void): Promise<void> {
  const recorder = new Recorder();
  record(recorder);
  const stub = accumulator(env, 0);
  await stub.merge([{ source: freshId(), seq: 1, series: recorder.take() }]);
}

const alert = async (name: string) => sample(await scrape(service), "plaudit_alert", { name });

describe("alert rules", () => {
  it("do not fire without data, and report no value where nothing was measured", () => {
    const empty = { totals: new Map(), recent: { seconds: 10, series: new Map() }, alert: { seconds: 300, series: new Map() } };
    const states = evaluateAlerts(empty);
    expect(states.filter((state) => state.firing)).toEqual([]);
    // Counts of events (hot items, dead letters, overloads) are a real 0; rates, ratios and gauges have no value.
    const counted = ["hot_items", "dead_letters", "objects_overloaded"];
    for (const state of states) expect([state.name, state.value]).toEqual([state.name, counted.includes(state.name) ? 0 : null]);
  });
});

describe("alert gauges and the dashboard's alert states", () => {
  // Storage is this file's own, and each rule's inputs are recorded only by its own test, so the
  // tests hold in any order.
  const firingOnDashboard = async (name: string) => {
    const res = await call("GET", "/v1/admin/dashboard.json", { token: service });
    return (await json<{ alerts: Array<{ name: string; firing: boolean }> }>(res)).alerts.find((a) => a.name === name)!.firing;
  };

  it.each<[string, (r: Recorder) => void]>([
    ["like_latency_p99", (r) => Array.from({ length: 50 }, () => r.observe("request_duration_seconds", { route: "/v1/like", method: "POST" }, 0.3))],
    ["read_latency_p99", (r) => Array.from({ length: 50 }, () => r.observe("request_duration_seconds", { route: "/v1/counts", method: "POST" }, 0.08))],
    ["cache_hit_rate", (r) => (r.count("cache_lookups_total", { cache: "memory", result: "hit" }, 80), r.count("cache_lookups_total", { cache: "memory", result: "miss" }, 20))],
    ["dedup_rate", (r) => (r.count("toggle_outcomes_total", { counter: "likes", outcome: "liked" }, 70), r.count("toggle_outcomes_total", { counter: "likes", outcome: "already_liked" }, 30))],
    ["consumer_lag", (r) => r.gauge("aggregator_lag_seconds", { queue: "events" }, 45)],
    ["drift", (r) => r.gauge("reconciliation_drift_ratio", {}, 0.02)],
    ["hot_items", (r) => r.count("shard_splits_total", {}, 5001)],
    ["error_rate", (r) => (r.count("requests_total", { route: "/v1/like", method: "POST", status: "200" }, 990), r.count("requests_total", { route: "/v1/like", method: "POST", status: "503" }, 10))],
    ["consumer_backlog", (r) => (r.count("queue_messages_total", { queue: "q", event: "sent" }, 20_000), r.count("queue_messages_total", { queue: "q", event: "consumed" }, 5_000))],
    ["dead_letters", (r) => r.count("queue_messages_total", { queue: "q-dlq", event: "dead_lettered" }, 1)],
    // Consumed as fast as sent: a busy queue with no backlog, so consumer_backlog stays quiet whichever runs first.
    ["queue_headroom", (r) => (r.count("queue_messages_total", { queue: "q", event: "sent" }, 10_000_000), r.count("queue_messages_total", { queue: "q", event: "consumed" }, 10_000_000))],
    ["d1_query_headroom", (r) => r.count("d1_queries_total", { caller: "/v1/counts", database: "0" }, 10_000_000)],
    ["d1_size_headroom", (r) => r.gauge("d1_database_bytes", { database: "0" }, 9e9)],
    ["objects_overloaded", (r) => r.count("object_overloaded_total", { object: "item_counter" }, 1)],
    ["breaker_open", (r) => r.gauge("circuit_breaker_open", { dependency: "central" }, 1)],
  ])("%s fires once its threshold is crossed, in /metrics and on the dashboard", async (name, record) => {
    expect({ gauge: await alert(name), dashboard: await firingOnDashboard(name) }).toEqual({ gauge: 0, dashboard: false });
    await flush(record);
    expect({ gauge: await alert(name), dashboard: await firingOnDashboard(name) }).toEqual({ gauge: 1, dashboard: true });
  });
});
