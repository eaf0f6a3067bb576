import { existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeStateDir, startServer, type LocalServer } from "../../bench/lib/server";
import { ENDPOINTS } from "../../workers/openapi/registry";
import { printServerOutputOnFailure, serverLog } from "./server-output";

// Debian's chromium. A missing browser fails the test rather than skipping it:
// a skipped check looks, in a summary, like a passed one.
const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((path) => existsSync(path));
const root = resolve(import.meta.dirname, "../..");

describe("the /docs page in a browser, against npm start", () => {
  let server: LocalServer | undefined;
  let browser: Browser;
  let base: string;

  printServerOutputOnFailure(() => serverLog(server?.stateDir));

  beforeAll(async () => {
    if (!CHROMIUM) throw new Error("chromium is missing: run scripts/ensure-chromium.sh (as root) to install Debian's chromium");
    server = await startServer({ readyTimeoutMs: 120_000 });
    base = server.url;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    if (server) removeStateDir(server.stateDir);
  }, 30_000);

  it("renders every endpoint of the document, loading nothing from another origin", { timeout: 60_000 }, async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
    const foreign: string[] = [];
    const problems: string[] = [];
    await page.route("**/*", (route) => {
      if (route.request().url().startsWith(base)) return route.continue();
      foreign.push(route.request().url());
      return route.abort();
    });
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    page.on("pageerror", (error) => problems.push(error.message));

    await page.goto(`${base}/docs`);
    await page.locator(".opblock").first().waitFor({ timeout: 30_000 });
    const operations = await page.locator(".opblock-summary").evaluateAll((nodes) =>
      nodes.map((n) => `${n.querySelector(".opblock-summary-method")?.textContent} ${n.querySelector(".opblock-summary-path")?.getAttribute("data-path")}`),
    );
    mkdirSync(join(root, "test/artifacts"), { recursive: true });
    await page.screenshot({ path: join(root, "test/artifacts/docs.png"), fullPage: true });

    expect(operations.sort()).toEqual(ENDPOINTS.map((e) => `${e.method.toUpperCase()} ${e.path}`).sort());
    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
  });

  it("calls the API from the page with Try it out", { timeout: 120_000 }, async () => {
    const page = await browser.newPage();
    // What the test needs is the button, which waits for the page's scripts itself: not every resource's load
    // event, which a CI run saw take past 30 s through wrangler dev while other test files loaded both cores.
    await page.goto(`${base}/docs#/counts/count`, { waitUntil: "domcontentloaded", timeout: 60_000 });
    const operation = page.locator("#operations-counts-count");
    await operation.locator(".try-out__btn").click({ timeout: 60_000 });
    await operation.locator('input[placeholder="item_id"]').fill("456");
    await operation.locator('select').first().selectOption("post");
    await operation.locator(".execute").click();
    const status = operation.locator(".live-responses-table tr.response .response-col_status").first();
    await status.waitFor({ timeout: 30_000 });
    expect((await status.textContent())?.trim()).toBe("200");
  });
});
