import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { app } from "../../workers/app";
import { readAllAccumulators } from "../../metrics/accumulators";
import { call, freshId, json, like, newUser, tokenFor, unlike } from "./helpers";
import { parseExposition, sample, scrape, type Family } from "./metrics-exposition";

let service: string;

beforeAll(async () => {
  service = await tokenFor(freshId(), { role: "service" });
});

/** A sample's value after the sequence minus its value before. */
function delta(before: Family[], after: Family[], name: string, labels: Record<string, string>): number {
  return sample(after, name, labels) - sample(before, name, labels);
}

describe("GET /metrics after a known sequence of calls", () => {
  let before: Family[];
  let after: Family[];
  let bLiked: number;
  /** Scrapes made while waiting for deliveries: each one the final scrape sees is counted. */
  let scrapes: number;

  beforeAll(async () => {
    before = await scrape(service);
    const a = await newUser();
    const [i1, i2, i3] = [freshId(), freshId(), freshId()];
    for (const item of [i1, i2, i3]) expect((await like(a.token, item)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await json(await like(a.token, i1))).status).toBe("already_liked");
    expect((await json(await unlike(a.token, i2))).status).toBe("unliked");
    expect((await json(await unlike(a.token, i2))).status).toBe("not_liked");
    // User b spends the limit's burst of 30 at once, then likes until refused twice. A slow machine may
    // earn b a token meanwhile, so the test counts b's accepted likes rather than assuming 30.
    const b = await newUser();
    const burst = await Promise.all(Array.from({ length: 30 }, () => like(b.token, freshId())));
    expect(burst.map((r) => r.status)).toEqual(new Array(30).fill(200));
    bLiked = 30;
    for (let refused = 0, tries = 0; refused < 2 && tries < 20; tries++) {
      const status = (await like(b.token, freshId())).status;
      if (status === 429) refused++;
      else if (status === 200) bLiked++;
    }
    // Likes are answered before their delivery: wait until every change enqueued was delivered.
    const enqueued = 3 + bLiked + 1;
    scrapes = 0;
    const deadline = Date.now() + 15_000;
    do {
      after = await scrape(service);
      scrapes++;
      if (delta(before, after, "plaudit_outbox_delivered_total", { object: "user_likes" }) === enqueued) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    } while (Date.now() < deadline);
  });

  it("counts every change through the user's outbox, and every delivery of it", () => {
    const changes = 3 + bLiked + 1;
    expect(delta(before, after, "plaudit_outbox_enqueued_total", { object: "user_likes" })).toBe(changes);
    expect(delta(before, after, "plaudit_outbox_delivered_total", { object: "user_likes" })).toBe(changes);
  });

  it("counts each like outcome exactly", () => {
    const outcome = (o: string) => delta(before, after, "plaudit_toggle_outcomes_total", { counter: "likes", outcome: o });
    expect({
      liked: outcome("liked"),
      already_liked: outcome("already_liked"),
      unliked: outcome("unliked"),
      not_liked: outcome("not_liked"),
      rate_limited: outcome("rate_limited"),
    }).toEqual({ liked: 3 + bLiked, already_liked: 2, unliked: 1, not_liked: 1, rate_limited: 2 });
  });

  it("counts requests by route, method and status", () => {
    const requests = (method: string, status: string) =>
      delta(before, after, "plaudit_requests_total", { route: "/v1/like", method, status });
    expect({ post200: requests("POST", "200"), post429: requests("POST", "429"), delete200: requests("DELETE", "200") }).toEqual({
      post200: 5 + bLiked,
      post429: 2,
      delete200: 2,
    });
  });

  it("counts each scrape that came before, once", () => {
    expect(delta(before, after, "plaudit_requests_total", { route: "/metrics", method: "GET", status: "200" })).toBe(scrapes);
  });

  it("counts rate-limited requests and errors by code", () => {
    expect(delta(before, after, "plaudit_rate_limited_total", { route: "/v1/like" })).toBe(2);
    expect(delta(before, after, "plaudit_errors_total", { code: "rate_limited" })).toBe(2);
  });

  it("times every like request in the route's latency histogram", () => {
    const timed = (method: string) =>
      delta(before, after, "plaudit_request_duration_seconds_count", { route: "/v1/like", method });
    expect({ post: timed("POST"), delete: timed("DELETE") }).toEqual({ post: 7 + bLiked, delete: 2 });
  });

  it("declares every family with HELP and a counter, gauge or histogram TYPE, named plaudit_*", () => {
    expect(after.length).toBeGreaterThan(0);
    for (const family of after) {
      expect(family.name).toMatch(/^plaudit_[a-z0-9_]+$/);
      expect(family.help).toMatch(/\S/);
      expect(["counter", "gauge", "histogram"]).toContain(family.type);
    }
  });

  it("writes latency buckets from 1 ms to 5 s", () => {
    const les = after
      .find((f) => f.name === "plaudit_request_duration_seconds")!
      .samples.filter((s) => s.name.endsWith("_bucket") && s.labels.route === "/v1/like" && s.labels.method === "POST")
      .map((s) => s.labels.le);
    expect(les[0]).toBe("0.001");
    expect(les.at(-2)).toBe("5");
    expect(les.at(-1)).toBe("+Inf");
  });

  it("exposes an alert gauge and threshold for each rule", () => {
    const names = after.find((f) => f.name === "plaudit_alert")!.samples.map((s) => s.labels.name).sort();
    expect(names).toEqual(
      [
        "breaker_open",
        "cache_hit_rate",
        "consumer_backlog",
        "consumer_lag",
        "d1_query_headroom",
        "d1_size_headroom",
        "dead_letters",
        "dedup_rate",
        "drift",
        "error_rate",
        "hot_items",
        "like_latency_p99",
        "objects_overloaded",
        "queue_headroom",
        "read_latency_p99",
      ].sort(),
    );
    expect(sample(after, "plaudit_alert_threshold", { name: "error_rate" })).toBe(0.001);
    expect(sample(after, "plaudit_alert_threshold", { name: "like_latency_p99" })).toBe(0.1);
    expect(sample(after, "plaudit_alert_threshold", { name: "hot_items" })).toBe(5000);
  });
});

describe("the exposition reader these tests use", () => {
  it("rejects a sample outside its family", () => {
    expect(() => parseExposition("# TYPE a_total counter\na_total 1\nb_total 2\n")).toThrow(/outside its family/);
  });

  it("rejects a bad label escape", () => {
    expect(() => parseExposition('# TYPE a_total counter\na_total{x="\\q"} 1\n')).toThrow(/bad escape/);
  });

  it("rejects a histogram whose +Inf bucket differs from its count", () => {
    const text = '# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 3\n';
    expect(() => parseExposition(text)).toThrow(/differs from _count/);
  });
});

describe("access to the metrics", () => {
  const endpoints = ["/metrics", "/v1/admin/dashboard.json"];

  it.each(endpoints)("%s without a token is 401", async (path) => {
    const res = await call("GET", path);
    expect(res.status).toBe(401);
    expect((await json(res)).error).toBe("unauthorized");
  });

  it.each(endpoints)("%s with a user's token is 403", async (path) => {
    const res = await call("GET", path, { token: await tokenFor(freshId()) });
    expect(res.status).toBe(403);
    expect((await json(res)).error).toBe("forbidden");
  });

  it("/metrics answers without a token when METRICS_PUBLIC is true", async () => {
    const ctx = createExecutionContext();
    const res = await app.fetch(new Request("http://plaudit.test/metrics"), { ...env, METRICS_PUBLIC: "true" }, ctx);
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const text = await res.text();
    expect(() => parseExposition(text)).not.toThrow();
  });
});

describe("count reads", () => {
  it("count the first read of an item as a cache miss and a repeat within the TTL as a memory hit", async () => {
    const lookups = (families: Family[], cache: string, result: string) =>
      sample(families, "plaudit_cache_lookups_total", { cache, result });
    const before = await scrape(service);
    const item = freshId();
    for (let i = 0; i < 2; i++) expect((await call("GET", `/v1/count?item_id=${item}&item_type=post`)).status).toBe(200);
    const after = await scrape(service);
    expect({
      miss: lookups(after, "all", "miss") - lookups(before, "all", "miss"),
      memory: lookups(after, "memory", "hit") - lookups(before, "memory", "hit"),
    }).toEqual({ miss: 1, memory: 1 });
  });
});

describe("flushing", () => {
  it("reaches the metrics objects without a scrape: an isolate that goes quiet still reports", async () => {
    const item = freshId();
    const user = await newUser();
    const likedBefore = async () => {
      const read = await readAllAccumulators(env);
      let sum = 0;
      for (const s of read.totals.values()) {
        if (s.kind === "counter" && s.name === "plaudit_toggle_outcomes_total" && s.labels.outcome === "liked") sum += s.value;
      }
      return sum;
    };
    const start = await likedBefore();
    expect((await like(user.token, item)).status).toBe(200);
    await expect.poll(likedBefore, { timeout: 5_000, interval: 100 }).toBe(start + 1);
  });
});

describe("an account's removal", () => {
  it("counts its unlikes as enqueued and delivered, so the outbox's two counters meet again", async () => {
    const user = await newUser();
    const items = [freshId(), freshId()];
    for (const item of items) expect((await like(user.token, item)).status).toBe(200);
    const outbox = async () => {
      const families = await scrape(service);
      const enqueued = sample(families, "plaudit_outbox_enqueued_total", { object: "user_likes" });
      return { enqueued, waiting: enqueued - sample(families, "plaudit_outbox_delivered_total", { object: "user_likes" }) };
    };
    await expect.poll(async () => (await outbox()).waiting, { timeout: 15_000, interval: 200 }).toBe(0);
    const before = (await outbox()).enqueued;
    const admin = `/v1/admin/users/${user.id}`;
    expect((await call("DELETE", admin, { token: service })).status).toBe(200);
    await expect.poll(async () => (await json(await call("GET", `${admin}/removal`, { token: service }))).phase, { timeout: 60_000, interval: 200 }).toBe("done");
    await expect.poll(async () => (await outbox()).waiting, { timeout: 15_000, interval: 200 }).toBe(0);
    expect((await outbox()).enqueued - before).toBe(items.length);
  });
});
