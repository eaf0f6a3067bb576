// The dashboard in a real browser: Debian's chromium driven by playwright-core,
// against `npm start` on a free port with its own state and secrets.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../bench/lib/server";
import { signJwt } from "../../shared/jwt";
import { printServerOutputOnFailure } from "./server-output";

const ROOT = resolve(import.meta.dirname, "../..");
const ARTIFACTS = join(ROOT, "test/artifacts");
const CHROMIUM = "/usr/bin/chromium";
const SECRET = randomBytes(32).toString("hex");
const HOT_ITEM = "424242";
const HOT_SHARDS = 4;
const STARTUP_MS = 120_000;

let work: string;
let server: ChildProcess | undefined;
let serverLog = "";
let base: string;
let browser: BrowserContext | undefined;
let serviceToken: string;

const token = async (sub: string, role?: string) =>
  signJwt({ sub, exp: Math.floor(Date.now() / 1000) + 3600, ...(role ? { role } : {}) }, SECRET);

async function waitForServer(): Promise<void> {
  const deadline = Date.now() + STARTUP_MS;
  while (Date.now() < deadline) {
    if (server?.exitCode !== null) throw new Error(`npm start exited early:\n${serverLog}`);
    try {
      if ((await fetch(`${base}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`npm start did not answer within ${STARTUP_MS} ms:\n${serverLog}`);
}

/** Ends `npm start` and everything it started (wrangler, workerd): they share its process group. */
async function stopServer(): Promise<void> {
  const child = server;
  if (!child?.pid || child.exitCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  process.kill(-child.pid, "SIGTERM");
  const timeout = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 10_000);
  await exited;
  clearTimeout(timeout);
}

/** Likes from many users, half of them on one item, in small bursts until `done()`; bounded in count. */
async function generateLikes(done: () => boolean): Promise<number> {
  let sent = 0;
  for (let burst = 0; burst < 120 && !done(); burst++) {
    const calls = Array.from({ length: 8 }, async (_, i) => {
      const user = String(10_000 + burst * 8 + i);
      const item = i % 2 === 0 ? HOT_ITEM : String(1_000_000 + burst * 8 + i);
      const res = await fetch(`${base}/v1/like`, {
        method: "POST",
        headers: { authorization: `Bearer ${await token(user)}`, "content-type": "application/json" },
        body: JSON.stringify({ item_id: item, item_type: "post" }),
      });
      if (res.status !== 200) throw new Error(`like answered ${res.status}: ${await res.text()}`);
    });
    await Promise.all(calls);
    sent += calls.length;
    await new Promise((r) => setTimeout(r, 250));
  }
  return sent;
}

async function openDashboard(viewport: { width: number; height: number }, withToken: string): Promise<Page> {
  const page = await browser!.newPage();
  await page.setViewportSize(viewport);
  await page.goto(`${base}/dashboard`);
  await page.locator("#token").fill(withToken);
  await page.getByRole("button", { name: "Open the dashboard" }).click();
  return page;
}

const likesValue = (page: Page) => page.locator('[data-panel="throughput"] [data-value="likes_per_second"] strong');

printServerOutputOnFailure(() => serverLog);

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    const install = spawnSync("bash", [join(ROOT, "scripts/ensure-chromium.sh")], { stdio: "inherit" });
    if (install.status !== 0) throw new Error("scripts/ensure-chromium.sh could not install chromium");
  }
  work = mkdtempSync(join(tmpdir(), "plaudit-dashboard-"));
  const devVars = join(work, ".dev.vars");
  // Limits out of the way, and an item hot past 5 likes a second (staying hot), so a test can make one.
  const vars = {
    AUTH_SECRET: SECRET,
    RATE_LIMIT_PER_MINUTE: "100000",
    RATE_LIMIT_PER_DAY: "1000000",
    HOT_WRITES_PER_SEC: "5",
    HOT_WINDOW_SECONDS: "1",
    HOT_SHARDS: String(HOT_SHARDS),
    COOL_WINDOW_SECONDS: "3600",
    CHILD_REPORT_MS: "200",
  };
  writeFileSync(devVars, Object.entries(vars).map(([k, v]) => `${k}="${v}"\n`).join(""));
  const [port, inspectorPort] = [await freePort(), await freePort()];
  base = `http://127.0.0.1:${port}`;
  server = spawn("npm", ["start", "--", "--inspector-port", String(inspectorPort)], {
    cwd: ROOT,
    env: { ...process.env, PLAUDIT_PORT: String(port), PLAUDIT_STATE_DIR: join(work, "state"), PLAUDIT_DEV_VARS: devVars },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  server.stdout!.on("data", (d: Buffer) => (serverLog += d.toString()));
  server.stderr!.on("data", (d: Buffer) => (serverLog += d.toString()));
  await waitForServer();
  serviceToken = await token("1", "service");
  browser = await chromium.launchPersistentContext(join(work, "chromium-profile"), {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
  mkdirSync(ARTIFACTS, { recursive: true });
}, STARTUP_MS + 180_000);

afterAll(async () => {
  await browser?.close();
  await stopServer();
  if (work) rmSync(work, { recursive: true, force: true });
}, 30_000);

describe("the dashboard in chromium", () => {
  it("shows likes per second above zero and lists the item the likes made hot", async () => {
    const page = await openDashboard({ width: 1280, height: 900 }, serviceToken);
    await expect.poll(() => likesValue(page).textContent()).toBe("0");
    expect(await page.locator("#login").isVisible()).toBe(false);

    let done = false;
    const generating = generateLikes(() => done);
    try {
      await expect
        .poll(async () => Number.parseFloat((await likesValue(page).textContent()) ?? ""), { timeout: 30_000, interval: 200 })
        .toBeGreaterThan(0);
      const hotRow = page.locator(`#hot-items tr[data-item="post:${HOT_ITEM}"] td`);
      await expect
        .poll(() => hotRow.allTextContents(), { timeout: 45_000, interval: 250 })
        .toEqual([`post:${HOT_ITEM}`, expect.stringMatching(/^\d/), String(HOT_SHARDS)]);
      // Headroom: the likes' queue sends and D1 statements show against their limits.
      for (const panel of ["queue-headroom", "d1-queries"]) {
        const value = page.locator(`[data-panel="${panel}"] .value strong`);
        await expect.poll(async () => Number.parseFloat((await value.textContent()) ?? ""), { timeout: 30_000, interval: 250 }).toBeGreaterThan(0);
      }
      await expect.poll(() => page.locator('[data-panel="d1-size"] .value strong').textContent(), { timeout: 30_000 }).toMatch(/ GB$/);
    } finally {
      done = true;
      await generating;
    }
    // Error rate, overloads and breakers: a healthy service shows 0 % of errors, no refusals, every breaker closed.
    expect(await page.locator('[data-panel="errors"] .value strong').textContent()).toBe("0 %");
    expect(await page.locator('[data-panel="overloaded"] .value strong').textContent()).toBe("0");
    expect(await page.locator("#breakers tr").allTextContents()).toEqual(["All closed: no breaker has opened."]);
    await page.screenshot({ path: join(ARTIFACTS, "dashboard.png"), fullPage: true });
    await page.close();
  }, 120_000);

  it("turns a panel red exactly when its alert fires", async () => {
    // Reads of items nobody has read miss every cache tier: the hit-rate alert (under 90 %) fires.
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${base}/v1/count?item_id=${2_000_000 + i}&item_type=post`);
      expect(res.status).toBe(200);
    }
    const firing = async () => {
      const res = await fetch(`${base}/v1/admin/dashboard.json`, { headers: { authorization: `Bearer ${serviceToken}` } });
      const data = (await res.json()) as { alerts: Array<{ name: string; firing: boolean }> };
      return data.alerts.filter((a) => a.firing).map((a) => a.name);
    };
    await expect.poll(firing, { timeout: 20_000, interval: 250 }).toContain("cache_hit_rate");
    const page = await openDashboard({ width: 1280, height: 900 }, serviceToken);
    await expect.poll(() => page.locator('[data-panel="cache"].alerting').count()).toBe(1);
    // The alerts that have a panel of their own (the others show in the page's count of firing alerts).
    const withPanel = [
      ...["error_rate", "like_latency_p99", "read_latency_p99", "cache_hit_rate", "dedup_rate", "consumer_lag", "drift", "hot_items"],
      ...["queue_headroom", "d1_query_headroom", "d1_size_headroom", "objects_overloaded", "breaker_open"],
    ];
    await expect
      .poll(async () => (await page.locator(".panel.alerting").count()) === (await firing()).filter((n) => withPanel.includes(n)).length)
      .toBe(true);
    await page.close();
  }, 60_000);

  it("fits a phone-sized screen without sideways scrolling", async () => {
    const page = await openDashboard({ width: 390, height: 844 }, serviceToken);
    await expect.poll(() => likesValue(page).isVisible()).toBe(true);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(ARTIFACTS, "dashboard-phone.png"), fullPage: true });
    await page.close();
  }, 60_000);

  it("asks again for a token when a user's token is entered", async () => {
    const page = await openDashboard({ width: 800, height: 600 }, await token("7"));
    await expect.poll(() => page.locator("#login-error").textContent()).toContain("service token");
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.close();
  }, 60_000);
});
