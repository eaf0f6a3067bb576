import { beforeAll, describe, expect, it } from "vitest";
import { ipKey } from "../../workers/limits/client-ip";
import { call, freshId, json, newUser, tokenFor } from "./helpers";
import { sample, scrape, type Family } from "./metrics-exposition";

// Per-client limits on Cloudflare's Rate Limiting binding, as wrangler's
// emulation counts them. vitest.config.ts sets the test limits: 8 writes per
// address, 5 per device, 12 reads per address, each in 60 s windows. A window
// may turn over during a test, so a test sends until refused, bounded by two
// windows' worth, and checks at least a full window was accepted first.
const WRITE_IP_LIMIT = 8;
const DEVICE_LIMIT = 5;
const READ_IP_LIMIT = 12;

let nextAddress = Math.floor(Math.random() * 200) * 65_536;
/** A fresh public IPv4 address per test: the limiter's counts are shared by the whole file. */
function freshIp(): string {
  nextAddress++;
  return `203.${(nextAddress >> 16) & 255}.${(nextAddress >> 8) & 255}.${nextAddress & 255}`;
}

const likeFrom = (token: string, ip: string) =>
  call("POST", "/v1/like", { token, body: { item_id: freshId(), item_type: "post" }, headers: { "cf-connecting-ip": ip } });

/** Sends until the first refusal (at most two windows' worth); returns how many were accepted and the refusal. */
async function untilRefused(limit: number, send: (i: number) => Promise<Response>): Promise<{ accepted: number; refusal: Response }> {
  for (let i = 0; i <= 2 * limit; i++) {
    const res = await send(i);
    if (res.status === 429) return { accepted: i, refusal: res };
    expect(res.status).toBe(200);
  }
  throw new Error(`not refused after ${2 * limit + 1} requests`);
}

async function expectRefusal(res: Response, message: RegExp): Promise<void> {
  expect(res.status).toBe(429);
  expect(res.headers.get("retry-after")).toBe("60");
  const body = await json(res);
  expect(body).toMatchObject({ error: "rate_limited", retry_after: 60 });
  expect(body.message).toMatch(message);
}

describe("client address keys", () => {
  it("counts an IPv4 address as itself and an IPv6 address by its /64", () => {
    expect(ipKey("198.51.100.7")).toBe("ip4:198.51.100.7");
    expect(ipKey("::ffff:198.51.100.7")).toBe("ip4:198.51.100.7");
    expect(ipKey("2001:db8:1:2:aaaa::1")).toBe("ip6:2001:db8:1:2::/64");
    expect(ipKey("2001:0db8:0001:0002:ffff:ffff:ffff:ffff")).toBe("ip6:2001:db8:1:2::/64");
    expect(ipKey("2001:DB8:1:2::")).toBe("ip6:2001:db8:1:2::/64");
    expect(ipKey("2001:db8::")).toBe("ip6:2001:db8:0:0::/64");
    expect(ipKey("2001:db8:1:3::1")).not.toBe(ipKey("2001:db8:1:2::1"));
  });

  it("refuses text that is not an address", () => {
    for (const text of ["", "unknown", "300.1.1.1", "1.2.3", "2001:db8::1::2", "2001:db8:1:2:3:4:5:6:7", "12345::", "fe80::1%eth0"]) {
      expect({ text, key: ipKey(text) }).toEqual({ text, key: null });
    }
  });
});

describe("per-client limits on writes", () => {
  let before: Family[];
  let service: string;

  beforeAll(async () => {
    service = await tokenFor(freshId(), { role: "service" });
    before = await scrape(service);
  });

  it("refuses a load from one address across many users past the per-address limit", async () => {
    const ip = freshIp();
    const users = await Promise.all(Array.from({ length: 2 * WRITE_IP_LIMIT + 1 }, () => newUser()));
    const { accepted, refusal } = await untilRefused(WRITE_IP_LIMIT, (i) => likeFrom(users[i]!.token, ip));
    expect(accepted).toBeGreaterThanOrEqual(WRITE_IP_LIMIT);
    await expectRefusal(refusal, /network/);
  });

  it("accepts the same load from as many addresses", async () => {
    const users = await Promise.all(Array.from({ length: 2 * WRITE_IP_LIMIT + 1 }, () => newUser()));
    const statuses = [];
    for (const user of users) statuses.push((await likeFrom(user.token, freshIp())).status);
    expect(statuses).toEqual(users.map(() => 200));
  });

  it("counts every address of an IPv6 /64 together, and another /64 apart", async () => {
    const prefix = `2001:db8:${(nextAddress++ & 0xffff).toString(16)}:7`;
    const users = await Promise.all(Array.from({ length: 2 * WRITE_IP_LIMIT + 1 }, () => newUser()));
    const { accepted } = await untilRefused(WRITE_IP_LIMIT, (i) => likeFrom(users[i]!.token, `${prefix}:${i.toString(16)}::1`));
    expect(accepted).toBeGreaterThanOrEqual(WRITE_IP_LIMIT);
    expect((await likeFrom(users[accepted]!.token, `${prefix.replace(/:7$/, ":8")}::1`)).status).toBe(200);
  });

  it("refuses one device across many users past the per-device limit, from any address", async () => {
    const device = `phone-${freshId()}`;
    const tokens = await Promise.all(Array.from({ length: 2 * DEVICE_LIMIT + 1 }, () => tokenFor(freshId(), { claims: { device_id: device } })));
    const { accepted, refusal } = await untilRefused(DEVICE_LIMIT, (i) => likeFrom(tokens[i]!, freshIp()));
    expect(accepted).toBeGreaterThanOrEqual(DEVICE_LIMIT);
    await expectRefusal(refusal, /device/);
    const other = await tokenFor(freshId(), { claims: { device_id: `phone-${freshId()}` } });
    expect((await likeFrom(other, freshIp())).status).toBe(200);
  });

  it("does not count loopback addresses (local loads) nor requests with no address", async () => {
    const user = await newUser();
    for (let i = 0; i < WRITE_IP_LIMIT + 2; i++) {
      const res = await likeFrom(user.token, i % 2 === 0 ? "127.0.0.1" : "::1");
      expect(res.status).toBe(200);
    }
  });

  it("answers 400 before 429: a refused address still gets told its body is bad", async () => {
    const ip = freshIp();
    const users = await Promise.all(Array.from({ length: 2 * WRITE_IP_LIMIT + 1 }, () => newUser()));
    const { accepted } = await untilRefused(WRITE_IP_LIMIT, (i) => likeFrom(users[i]!.token, ip));
    const bad = await call("POST", "/v1/like", { token: users[accepted]!.token, body: { item_id: "007" }, headers: { "cf-connecting-ip": ip } });
    expect(bad.status).toBe(400);
  });

  it("counts refusals in /metrics by kind", async () => {
    const after = await scrape(service);
    const delta = (kind: string) =>
      sample(after, "plaudit_limit_refusals_total", { kind }) - sample(before, "plaudit_limit_refusals_total", { kind });
    expect({ ip: delta("ip"), device: delta("device") }).toEqual({ ip: 3, device: 1 });
  });
});

describe("per-address limit on public reads", () => {
  it("refuses one address past the limit and serves another", async () => {
    const ip = freshIp();
    const item = freshId();
    const read = (from: string) => call("GET", `/v1/count?item_id=${item}&item_type=post`, { headers: { "cf-connecting-ip": from } });
    const { accepted, refusal } = await untilRefused(READ_IP_LIMIT, () => read(ip));
    expect(accepted).toBeGreaterThanOrEqual(READ_IP_LIMIT);
    await expectRefusal(refusal, /reads/);
    expect((await read(freshIp())).status).toBe(200);
  });
});
