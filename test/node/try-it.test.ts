// The README's "Try it", run as the README writes it against the real
// `npm start` from a fresh state folder: every command of the block marked
// `sh try-it`, in order, each answer matched against the one the README
// shows. Then the schedule's own reconciliation repairs a count row deleted
// from D1 (no call to /__scheduled), and SIGTERM to `npm start` ends every
// process it started and frees every port they took.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { freePort } from "../../bench/lib/server";
import { expectAllGone, killGroup, listeningPorts, npmStart, root, startEnv, type NpmStart } from "./npm-start";
import { printServerOutputOnFailure } from "./server-output";

const wrangler = join(root, "node_modules", ".bin", "wrangler");
/** Each command is tried again until its answer matches, for answers the pipeline brings within a second or two. */
const STEP_TIMEOUT_MS = 30_000;

type Step = { command: string; expected: string[] };

/** The `sh try-it` block's paragraphs: the command lines, then the `# ` lines showing its answer. */
function tryItSteps(readme: string): Step[] {
  const block = /```sh try-it\n([\s\S]*?)\n```/.exec(readme)?.[1];
  if (!block) throw new Error("README.md has no ```sh try-it block");
  return block.split(/\n\s*\n/).map((paragraph) => {
    const lines = paragraph.split("\n");
    const answer = lines.findIndex((line, i) => i > 0 && line.startsWith("#"));
    const commands = answer === -1 ? lines : lines.slice(0, answer);
    const expected = answer === -1 ? [] : lines.slice(answer).map((line) => line.replace(/^# ?/, ""));
    return { command: commands.join("\n"), expected };
  });
}

/** The answer shown, as a pattern: `...` stands for anything on its line. */
function answerPattern(expected: string[]): RegExp {
  const line = (text: string) => text.split("...").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("[^\\n]*");
  return new RegExp(expected.map(line).join("[\\s\\S]*?"));
}

let dir: string;
let port: number;
let server: NpmStart | undefined;
let env: NodeJS.ProcessEnv;

/**
 * One statement on the running server's D1 file. The server writes it too (the
 * schedule fires every few seconds), so a statement that meets its lock
 * (SQLITE_BUSY, nothing done) is run again, a bounded number of times.
 */
function d1(sql: string): Record<string, unknown>[] {
  for (let attempt = 1; ; attempt++) {
    const run = spawnSync(wrangler, ["d1", "execute", "DB", "--local", "--persist-to", join(dir, "state"), "--json", "--command", sql], {
      cwd: root,
      env: { ...process.env, CI: "true", CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" },
      encoding: "utf8",
    });
    if (run.status === 0) return (JSON.parse(run.stdout) as { results: Record<string, unknown>[] }[])[0]!.results;
    if (!run.stdout.includes("SQLITE_BUSY") || attempt === 20) throw new Error(`wrangler d1 execute failed: ${run.stderr}${run.stdout}`);
  }
}

printServerOutputOnFailure(() => server?.output());

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "plaudit-try-it-"));
  port = await freePort();
  // A short schedule, so the reconciliation below runs within seconds (README, Configuration).
  env = startEnv(port, join(dir, "state"), join(dir, "dev.vars"), { PLAUDIT_SCHEDULE: "3s" });
  server = await npmStart(env);
}, 330_000);

afterAll(() => {
  killGroup(server);
  rmSync(dir, { recursive: true, force: true });
});

describe("npm start, and the README's Try it", () => {
  it("prints where everything is", () => {
    const url = `http://127.0.0.1:${port}`;
    for (const where of [`${url}/v1/`, `${url}/docs`, `${url}/dashboard`, `${url}/live`, `${url}/demo/`, "central store  http://127.0.0.1:", `state folder   ${join(dir, "state")}`]) {
      expect(server!.output()).toContain(where);
    }
  });

  it("answers every command of Try it as the README shows", async () => {
    const steps = tryItSteps(readFileSync(join(root, "README.md"), "utf8"));
    expect(steps.length).toBeGreaterThan(20);
    let stepEnv = { ...env };
    for (const step of steps) {
      const local = (text: string) => text.replaceAll("127.0.0.1:8787", `127.0.0.1:${port}`).replaceAll("/tmp/plaudit-", join(dir, "plaudit-"));
      const command = local(step.command);
      const envFile = join(dir, "step.env");
      // Variables a step sets (TOKEN, ADMIN) are exported to the steps after it.
      const script = `set -a -e -o pipefail\nexec 2>&1\n${command}\nset +a\nenv -0 > '${envFile}'\n`;
      const pattern = answerPattern(step.expected.map(local));
      let answer = "";
      await vi.waitFor(
        () => {
          const run = spawnSync("bash", ["-c", script], { cwd: root, env: stepEnv, encoding: "utf8" });
          answer = run.stdout;
          expect(run.status, `${command}\n${answer}`).toBe(0);
          expect(answer, command).toMatch(pattern);
        },
        { timeout: STEP_TIMEOUT_MS, interval: 500 },
      );
      stepEnv = Object.fromEntries(
        readFileSync(envFile, "utf8")
          .split("\0")
          .filter(Boolean)
          .map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]),
      );
    }
  }, 600_000);

  it("repairs a count row deleted from D1 by the schedule's own reconciliation", async () => {
    const row = "FROM item_counts WHERE item_type = 'post' AND item_id = '789'";
    // Item 789 is idle since the import: only the reconciliation's request for a fresh snapshot can write its row again.
    expect(d1(`DELETE ${row} RETURNING likes`)).toEqual([{ likes: 2 }]);
    await vi.waitFor(() => expect(d1(`SELECT likes ${row}`)).toEqual([{ likes: 2 }]), { timeout: 120_000, interval: 1_000 });
  }, 150_000);

  it("stops on SIGTERM, leaving no process and every port it took free", async () => {
    const group = server!.group;
    const ports = listeningPorts(group);
    // The API's port and the central store's at least.
    expect(ports).toContain(port);
    expect(ports.length).toBeGreaterThanOrEqual(2);
    // To npm alone, as a supervisor would: npm does not pass it on, and npm start stops all the same.
    process.kill(group, "SIGTERM");
    await expectAllGone(group, ports);
  }, 60_000);
});
