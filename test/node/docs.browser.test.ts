import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../bench/lib/server";
import { ENDPOINTS } from "../../workers/openapi/registry";

// Debian's chromium. A missing browser fails the test rather than skipping it:
// a skipped check looks, in a summary, like a passed one.
const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((path) => existsSync(path));
const root = resolve(import.meta.dirname, "../..");

async function waitUntilUp(url: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 240; i++) {
    if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}`);
    const up = await fetch(url).then((r) => r.ok, () => false);
    if (up) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${url} did not come up within two minutes`);
}

describe("the /docs page in a browser, against npm start", () => {
  let server: ChildProcess;
  let browser: Browser;
  let base: string;
  let state: string;

  beforeAll(async () => {
    if (!CHROMIUM) throw new Error("chromium is missing: run scripts/ensure-chromium.sh (as root) to install Debian's chromium");
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    state = mkdtempSync(join(tmpdir(), "plaudit-docs-"));
    // Its inspector on a port of its own: another file's server may be starting beside it (bench/lib/server.ts startServer).
    server = spawn("node", ["scripts/start.mjs", "--inspector-port", String(await freePort())], {
      cwd: root,
      env: {
        ...process.env,
        PLAUDIT_PORT: String(port),
        PLAUDIT_STATE_DIR: join(state, "state"),
        PLAUDIT_DEV_VARS: join(state, ".dev.vars"),
      },
      stdio: "ignore",
    });
    await waitUntilUp(`${base}/healthz`, server);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    server?.kill("SIGTERM");
    rmSync(state, { recursive: true, force: true });
  });

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

  it("calls the API from the page with Try it out", { timeout: 60_000 }, async () => {
    const page = await browser.newPage();
    await page.goto(`${base}/docs#/counts/count`);
    const operation = page.locator("#operations-counts-count");
    await operation.locator(".try-out__btn").click({ timeout: 30_000 });
    await operation.locator('input[placeholder="item_id"]').fill("456");
    await operation.locator('select').first().selectOption("post");
    await operation.locator(".execute").click();
    const status = operation.locator(".live-responses-table tr.response .response-col_status").first();
    await status.waitFor({ timeout: 30_000 });
    expect((await status.textContent())?.trim()).toBe("200");
  });
});
