// The like button (<plaudit-like>, clients/typescript/src/like-*.ts) on the demo
// page in a real browser: Debian's chromium driven by playwright-core, against
// one local server (scripts/start.mjs) with its own state, shared by the file.
// The last test stops that server mid-click.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page, type WebSocket } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idRange, serviceToken, userTokens } from "../../bench/lib/plaudit";
import { removeStateDir, startServer, type LocalServer } from "../../bench/lib/server";
import { printServerOutputOnFailure, serverLog } from "./server-output";

const ROOT = resolve(import.meta.dirname, "../..");
const CHROMIUM = "/usr/bin/chromium";
const BUNDLE = join(ROOT, "public", "demo", "plaudit-like.js");
/** Low, so a 429 takes a few requests; no other test here likes more than twice as one user. */
const RATE_LIMIT_PER_MINUTE = 4;

let server: LocalServer;
let browser: Browser | undefined;
let service: string;

printServerOutputOnFailure(() => serverLog(server?.stateDir));

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    const install = spawnSync("bash", [join(ROOT, "scripts/ensure-chromium.sh")], { stdio: "inherit" });
    if (install.status !== 0) throw new Error("scripts/ensure-chromium.sh could not install chromium");
  }
  if (!existsSync(BUNDLE)) {
    const built = spawnSync("npm", ["run", "build:client"], { cwd: ROOT, stdio: "inherit" });
    if (built.status !== 0) throw new Error("npm run build:client failed");
  }
  server = await startServer({ readyTimeoutMs: 240_000, vars: { RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT_PER_MINUTE) } });
  service = await serviceToken(server.secret);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
  });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  if (server) removeStateDir(server.stateDir);
}, 30_000);

let nextUser = 410_000n;
async function newUserToken(): Promise<string> {
  const [user] = idRange(1, nextUser++);
  return (await userTokens([user!], server.secret)).get(user!)!;
}

async function api(method: string, path: string, token?: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() };
}

const likesOf = async (id: string) => (await api("GET", `/v1/count?item_id=${id}&item_type=post`)).body.counts.likes as number | null;

/**
 * The demo feed with these posts, signed in with `token` (read-only without),
 * once every button has read its item (and shows its count, unless hidden).
 */
async function openFeed(context: BrowserContext, ids: readonly string[], token?: string, { hidden = false } = {}): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${server.url}/demo/?items=${ids.join(",")}${token ? `#token=${token}` : ""}`);
  await expect.poll(() => loadedCount(page), { timeout: 30_000 }).toBe(ids.length);
  if (!hidden) await expect.poll(() => page.locator("plaudit-like[count]").count(), { timeout: 30_000 }).toBe(ids.length);
  return page;
}

/** How many buttons have read their item: a token's buttons are enabled, a read-only one shows its count. */
const loadedCount = (page: Page) =>
  page.evaluate(
    () =>
      Array.from(document.querySelectorAll("plaudit-like")).filter((b) => {
        const button = b.shadowRoot!.querySelector("button")!;
        return !button.disabled || b.hasAttribute("count");
      }).length,
  );

/** What one button shows: pressed, the number on it, its tooltip, its message. */
function shown(page: Page, id: string) {
  return page.evaluate((id) => {
    const host = document.querySelector(`plaudit-like[item-id="${id}"]`)!;
    const root = host.shadowRoot!;
    const button = root.querySelector("button")!;
    return {
      pressed: button.getAttribute("aria-pressed"),
      count: root.querySelector("[part=count]")!.textContent,
      title: button.title,
      label: button.getAttribute("aria-label"),
      busy: button.getAttribute("aria-busy"),
      disabled: button.disabled,
      message: root.querySelector("[part=message]")!.textContent,
    };
  }, id);
}

const press = (page: Page, id: string) => page.locator(`plaudit-like[item-id="${id}"] button`).click();

describe("the like button in chromium", () => {
  it("reads 50 buttons with one count request, one has_liked request and one socket", async () => {
    const ids = idRange(50, 400_000n);
    const other = await newUserToken();
    expect((await api("POST", "/v1/like", other, { item_id: ids[7], item_type: "post" })).status).toBe(200);
    const token = await newUserToken();
    expect((await api("POST", "/v1/like", token, { item_id: ids[9], item_type: "post" })).status).toBe(200);

    const context = await browser!.newContext();
    const calls: string[] = [];
    const sockets: WebSocket[] = [];
    const sentFrames: string[] = [];
    context.on("request", (request) => {
      const path = new URL(request.url()).pathname;
      if (path.startsWith("/v1/")) calls.push(`${request.method()} ${path}`);
    });
    context.on("page", (page) =>
      page.on("websocket", (socket) => {
        sockets.push(socket);
        socket.on("framesent", (frame) => sentFrames.push(String(frame.payload)));
      }),
    );
    const page = await openFeed(context, ids, token);
    expect(calls.filter((c) => c === "POST /v1/counts")).toHaveLength(1);
    expect(calls.filter((c) => c === "POST /v1/has_liked")).toHaveLength(1);
    await expect.poll(() => sockets.length).toBe(1);
    await expect.poll(() => sentFrames.filter((f) => f.includes('"subscribe"')).length).toBe(1);
    expect(JSON.parse(sentFrames.find((f) => f.includes('"subscribe"'))!).items).toHaveLength(50);
    expect(await shown(page, ids[0]!)).toMatchObject({ pressed: "false", count: "0", title: "0 likes" });
    expect(await shown(page, ids[7]!)).toMatchObject({ pressed: "false", count: "1", title: "1 like" });
    expect(await shown(page, ids[9]!)).toMatchObject({ pressed: "true", count: "1" });
    expect((await shown(page, ids[0]!)).label).toMatch(/^Like this post/);

    // A button taken off the page unsubscribes its item; the last one gone closes the socket.
    await page.evaluate((id) => document.querySelector(`plaudit-like[item-id="${id}"]`)!.remove(), ids[0]!);
    await expect.poll(() => sentFrames.filter((f) => f.includes('"unsubscribe"'))).toEqual([JSON.stringify({ type: "unsubscribe", items: [{ item_id: ids[0], item_type: "post" }] })]);
    await page.evaluate(() => document.getElementById("feed")!.replaceChildren());
    await expect.poll(() => sockets[0]!.isClosed()).toBe(true);
    await context.close();
  }, 120_000);

  it("shows +1 at once, then the answer's count in place of the guess", async () => {
    const [id] = idRange(1, 401_000n);
    const token = await newUserToken();
    const context = await browser!.newContext();
    const page = await openFeed(context, [id!], token);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    await page.route("**/v1/like", async (route) => {
      await held;
      await route.continue();
    });
    await press(page, id!);
    await expect.poll(() => shown(page, id!)).toMatchObject({ pressed: "true", count: "1", busy: "true" });
    // Someone else likes it while the answer is held: the answer's count (2) replaces the guess (1).
    expect((await api("POST", "/v1/like", await newUserToken(), { item_id: id, item_type: "post" })).status).toBe(200);
    release();
    await expect.poll(() => shown(page, id!), { timeout: 15_000 }).toMatchObject({ pressed: "true", count: "2", busy: "false", title: "2 likes", message: "" });
    expect(await likesOf(id!)).toBe(2);
    await context.close();
  }, 60_000);

  it("resends a like whose answer was lost, and it counts once", async () => {
    const [id] = idRange(1, 402_000n);
    const token = await newUserToken();
    const context = await browser!.newContext();
    const page = await openFeed(context, [id!], token);
    let likes = 0;
    await page.route("**/v1/like", async (route) => {
      if (++likes > 1) return route.continue();
      // The server applies the like, and its answer never reaches the page.
      const answer = await route.fetch();
      expect(answer.status()).toBe(200);
      await route.abort("connectionreset");
    });
    await press(page, id!);
    await expect.poll(() => shown(page, id!), { timeout: 15_000 }).toMatchObject({ pressed: "true", count: "1", busy: "false", message: "" });
    expect(likes).toBe(2);
    expect(await likesOf(id!)).toBe(1);
    expect((await api("POST", "/v1/has_liked", token, { item_ids: [id], item_type: "post" })).body.liked[id!]).toBe(true);
    await context.close();
  }, 60_000);

  it("keeps a second tab of the same user in step within 2 s, and other viewers see it over the socket", async () => {
    const [id] = idRange(1, 403_000n);
    const token = await newUserToken();
    const context = await browser!.newContext();
    const first = await openFeed(context, [id!], token);
    const second = await openFeed(context, [id!], token);
    const visitor = await browser!.newContext();
    const anonymous = await openFeed(visitor, [id!]);
    expect(await shown(anonymous, id!)).toMatchObject({ count: "0", disabled: true, title: "0 likes" });
    await press(first, id!);
    await expect.poll(() => shown(second, id!), { timeout: 2_000, interval: 50 }).toMatchObject({ pressed: "true", count: "1" });
    await expect.poll(() => shown(anonymous, id!), { timeout: 30_000, interval: 100 }).toMatchObject({ pressed: "false", count: "1" });
    await context.close();
    await visitor.close();
  }, 90_000);

  it("shows no number for a count its owner hides, before and after a like", async () => {
    const [id, owner] = idRange(2, 404_000n);
    const settings = await api("PUT", `/v1/admin/items/post/${id}/settings`, service, { owner_id: owner, hide_counts: true });
    expect(settings.status).toBe(200);
    const context = await browser!.newContext();
    const page = await openFeed(context, [id!], await newUserToken(), { hidden: true });
    expect(await shown(page, id!)).toMatchObject({ pressed: "false", count: "", title: "", label: "Like this post", message: "" });
    expect(await page.locator(`plaudit-like[item-id="${id}"]`).getAttribute("count")).toBeNull();
    await press(page, id!);
    await expect.poll(() => shown(page, id!), { timeout: 15_000 }).toMatchObject({ pressed: "true", busy: "false", count: "" });
    await context.close();
  }, 60_000);

  it("toggles with Space and Enter on the focused button", async () => {
    const [id] = idRange(1, 405_000n);
    const context = await browser!.newContext();
    const page = await openFeed(context, [id!], await newUserToken());
    await page.locator(`plaudit-like[item-id="${id}"] button`).focus();
    await page.keyboard.press("Space");
    await expect.poll(() => shown(page, id!), { timeout: 15_000 }).toMatchObject({ pressed: "true", count: "1", busy: "false" });
    expect(await likesOf(id!)).toBe(1);
    await page.keyboard.press("Enter");
    await expect.poll(() => shown(page, id!), { timeout: 15_000 }).toMatchObject({ pressed: "false", count: "0", busy: "false" });
    expect(await likesOf(id!)).toBe(0);
    await context.close();
  }, 60_000);

  it("holds the button back after a 429 and says why", async () => {
    const ids = idRange(RATE_LIMIT_PER_MINUTE + 1, 406_000n);
    const token = await newUserToken();
    // The user spends the minute's likes elsewhere, until the server refuses one.
    const statuses: number[] = [];
    for (const id of ids.slice(1)) statuses.push((await api("POST", "/v1/like", token, { item_id: id, item_type: "post" })).status);
    expect(statuses.slice(0, RATE_LIMIT_PER_MINUTE)).toEqual(Array(RATE_LIMIT_PER_MINUTE).fill(200));
    const context = await browser!.newContext();
    const page = await openFeed(context, [ids[0]!], token);
    await press(page, ids[0]!);
    await expect.poll(() => shown(page, ids[0]!), { timeout: 15_000 }).toMatchObject({ pressed: "false", count: "0", disabled: true });
    expect((await shown(page, ids[0]!)).message).toMatch(/too many likes, try again in \d+ s/);
    expect(await likesOf(ids[0]!)).toBe(0);
    await context.close();
  }, 60_000);

  it("does the same in React: <LikeButton>s share one read and toggle", async () => {
    const ids = idRange(50, 408_000n);
    const token = await newUserToken();
    const context = await browser!.newContext();
    const calls: string[] = [];
    context.on("request", (request) => calls.push(`${request.method()} ${new URL(request.url()).pathname}`));
    const page = await context.newPage();
    await page.goto(`${server.url}/demo/react.html?items=${ids.join(",")}#token=${token}`);
    const enabled = () => page.evaluate(() => Array.from(document.querySelectorAll("article button")).filter((b) => !(b as HTMLButtonElement).disabled).length);
    await expect.poll(enabled, { timeout: 30_000 }).toBe(50);
    expect(calls.filter((c) => c === "POST /v1/counts")).toHaveLength(1);
    expect(calls.filter((c) => c === "POST /v1/has_liked")).toHaveLength(1);
    const button = page.locator(`article[data-item="${ids[4]}"] button`);
    expect(await button.getAttribute("aria-pressed")).toBe("false");
    await button.click();
    await expect.poll(() => button.getAttribute("aria-pressed")).toBe("true");
    await expect.poll(() => button.textContent(), { timeout: 15_000 }).toContain("1");
    await expect.poll(() => button.getAttribute("aria-busy"), { timeout: 15_000 }).toBe("false");
    expect(await button.getAttribute("title")).toBe("1 like");
    expect(await likesOf(ids[4]!)).toBe(1);
    await context.close();
  }, 60_000);

  // Last: it stops the file's server.
  it("rolls a like back with a message when the server stops mid-click", async () => {
    const [id] = idRange(1, 407_000n);
    const context = await browser!.newContext();
    const page = await openFeed(context, [id!], await newUserToken());
    await page.route("**/v1/like", async (route) => {
      await server.stop();
      await route.continue();
    });
    await press(page, id!);
    await expect.poll(() => shown(page, id!)).toMatchObject({ pressed: "true", count: "1" });
    await expect
      .poll(() => shown(page, id!), { timeout: 30_000 })
      .toMatchObject({ pressed: "false", count: "0", busy: "false", message: "Your like was not saved: the server did not answer. Try again." });
    await context.close();
  }, 90_000);
});
