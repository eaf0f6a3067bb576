// `npm start` when one of its servers dies: the other is stopped, no
// process of the group is left and no port stays taken; and the embedded
// central store keeps its data on disk, so a restart still has it.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { freePort } from "../../bench/lib/server";
import { expectAllGone, groupProcesses, killGroup, listeningPorts, npmStart, root, startEnv, type NpmStart } from "./npm-start";
import { printServerOutputOnFailure } from "./server-output";

let dir: string;
let env: NodeJS.ProcessEnv;
let url: string;
let server: NpmStart | undefined;

printServerOutputOnFailure(() => server?.output());

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "plaudit-start-crash-"));
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  env = startEnv(port, join(dir, "state"), join(dir, "dev.vars"), { PLAUDIT_SCHEDULE: "off" });
});

afterAll(() => {
  killGroup(server);
  rmSync(dir, { recursive: true, force: true });
});

function token(user: string): string {
  const run = spawnSync("npm", ["run", "-s", "token", "--", user], { cwd: root, env, encoding: "utf8" });
  if (run.status !== 0) throw new Error(`npm run token failed: ${run.stderr}`);
  return run.stdout.trim();
}

async function likers(bearer: string): Promise<string[]> {
  const res = await fetch(`${url}/v1/likers?item_id=456&item_type=post`, { headers: { authorization: `Bearer ${bearer}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { likers: { user_id: string }[] }).likers.map((l) => l.user_id);
}

/** SIGKILL to the one process of the group whose command line contains `marker`, then everything must be gone. */
async function crash(started: NpmStart, marker: string): Promise<void> {
  const ports = listeningPorts(started.group);
  expect(ports.length).toBeGreaterThanOrEqual(2);
  const victim = groupProcesses(started.group).find((p) => p.command.includes(marker));
  expect(victim, marker).toBeDefined();
  process.kill(victim!.pid, "SIGKILL");
  await expectAllGone(started.group, ports);
}

describe("a crash of either server of npm start", () => {
  it("stops the other when the central store dies, and the store's data survives a restart; the same when wrangler dies", async () => {
    server = await npmStart(env);
    const bearer = token("42");
    const res = await fetch(`${url}/v1/like`, {
      method: "POST",
      headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
      body: JSON.stringify({ item_id: "456", item_type: "post" }),
    });
    expect(res.status).toBe(200);
    await vi.waitFor(async () => expect(await likers(bearer)).toEqual(["42"]), { timeout: 30_000, interval: 250 });
    // At the default log level wrangler prints no line per request.
    expect(server.output()).not.toContain("[wrangler:info] GET /v1/likers");
    await crash(server, "scripts/central-store.mjs");

    server = await npmStart({ ...env, PLAUDIT_LOG_LEVEL: "info" });
    expect(await likers(bearer)).toEqual(["42"]);
    await vi.waitFor(() => expect(server!.output()).toContain("[wrangler:info] GET /v1/likers"), { timeout: 10_000, interval: 100 });
    await crash(server, "wrangler-dist/cli.js dev");
  }, 720_000);
});

describe("npm start's environment", () => {
  it("refuses an unknown PLAUDIT_LOG_LEVEL before it starts anything", () => {
    const run = spawnSync(process.execPath, [join(root, "scripts", "start.mjs")], { cwd: root, env: { ...env, PLAUDIT_LOG_LEVEL: "loud" }, encoding: "utf8", timeout: 60_000 });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('PLAUDIT_LOG_LEVEL is one of debug, info, log, warn, error, none, not "loud".');
    expect(run.stdout).not.toContain("AUTH_SECRET");
  });
});
