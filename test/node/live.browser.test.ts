// The live demo page in a real browser: Debian's chromium driven by
// playwright-core, against a local server on a free port with its own state.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idRange, userTokens } from "../../bench/lib/plaudit";
import { removeStateDir, startServer, type LocalServer } from "../../bench/lib/server";
import { printServerOutputOnFailure, serverLog } from "./server-output";

const ROOT = resolve(import.meta.dirname, "../..");
const CHROMIUM = "/usr/bin/chromium";

let server: LocalServer;
let browser: Browser | undefined;

printServerOutputOnFailure(() => serverLog(server?.stateDir));

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    const install = spawnSync("bash", [join(ROOT, "scripts/ensure-chromium.sh")], { stdio: "inherit" });
    if (install.status !== 0) throw new Error("scripts/ensure-chromium.sh could not install chromium");
  }
  server = await startServer({ readyTimeoutMs: 120_000 });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  if (server) removeStateDir(server.stateDir);
}, 30_000);

describe("the live page in chromium", () => {
  it("shows an item's likes change after a like, without a reload", async () => {
    const [a, b, c] = idRange(3, 300_000n);
    const [user] = idRange(1, 310_000n);
    const token = (await userTokens([user!], server.secret)).get(user!)!;
    const page = await browser!.newPage();
    await page.goto(`${server.url}/live?items=post:${a},post:${b},post:${c}`);
    await expect.poll(() => page.evaluate(() => document.body.dataset.live), { timeout: 30_000 }).toBe("subscribed");
    const likes = page.locator(`tr[data-item="post:${b}"] td[data-counter="likes"]`);
    await expect.poll(() => likes.textContent(), { timeout: 30_000 }).toBe("0");

    const res = await fetch(`${server.url}/v1/like`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ item_id: b, item_type: "post" }),
    });
    expect(res.status).toBe(200);
    await expect.poll(() => likes.textContent(), { timeout: 60_000, interval: 200 }).toBe("1");
    expect(await page.locator(`tr[data-item="post:${a}"] td[data-counter="likes"]`).textContent()).toBe("0");
    await page.close();
  }, 120_000);
});
