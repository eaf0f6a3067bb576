// The converging references (bench/reference/converging.ts and its pipeline
// shape, bench/reference/pipeline.ts) are the simplest designs
// `npm run bench -- --reference` sets plaudit's likes against for the work
// after an answer: each must itself do that work, or the comparison
// flatters it.
// Their answers, the count each converges on in the regional store (again
// after a change once an earlier count was stored), and that each reports
// its work until it is done, are checked here against a model of the edges.
import { execFileSync } from "node:child_process";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeStateDir, startReference, type LocalServer } from "../../bench/lib/server";

const SECRET = "converging-reference-test-secret-0123456789";

describe.each(["converging", "pipeline"])("the %s reference", (name) => {
  let server: LocalServer;

  beforeAll(async () => {
    server = await startReference(name, SECRET);
  });

  afterAll(async () => {
    await server?.kill();
    if (server) removeStateDir(server.stateDir);
  });

  async function toggle(user: string, item: string, on: boolean): Promise<{ status: number; body: { status: string; count: number } }> {
    const token = await new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject(user).setExpirationTime("1h").sign(new TextEncoder().encode(SECRET));
    const response = await fetch(`${server.url}/v1/like`, {
      method: on ? "POST" : "DELETE",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ item_type: "post", item_id: item }),
    });
    return { status: response.status, body: (await response.json()) as { status: string; count: number } };
  }

  /** The reference's D1 rows, read the way an operator would, with wrangler. */
  function storedLikes(): Record<string, number> {
    const out = execFileSync(
      "node_modules/.bin/wrangler",
      ["d1", "execute", "DB", "--local", "--persist-to", `${server.stateDir}/wrangler`, "-c", `bench/reference/${name}.toml`, "--json", "--command", "SELECT item_id, likes FROM item_counts"],
      { encoding: "utf8", env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" } },
    );
    const rows = (JSON.parse(out) as { results: { item_id: string; likes: number }[] }[])[0]!.results;
    return Object.fromEntries(rows.map((row) => [row.item_id, row.likes]));
  }

  /** Objects whose alarm is set, as the bench reads them before it takes a reference's CPU. */
  async function busy(): Promise<number> {
    return ((await (await fetch(`${server.url}/healthz`)).json()) as { busy: number }).busy;
  }

  it("answers as the contract does, brings each item's count to D1, and reports its work until it is done", async () => {
    const steps: [string, string, boolean, string, number][] = [
      ["1", "10", true, "liked", 1],
      ["2", "10", true, "liked", 2],
      ["2", "10", true, "already_liked", 2],
      ["3", "10", true, "liked", 3],
      ["3", "10", false, "unliked", 2],
      ["1", "11", true, "liked", 1],
      ["1", "11", false, "unliked", 0],
      ["4", "11", false, "not_liked", 0],
    ];
    for (const [user, item, on, status, count] of steps) {
      const answer = await toggle(user, item, on);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ status, count });
    }
    await expect.poll(storedLikes, { timeout: 20_000, interval: 500 }).toEqual({ "10": 2, "11": 0 });
    await expect.poll(busy, { timeout: 30_000, interval: 500 }).toBe(0);

    // A change to an item whose count was sent, acknowledged and stored: it goes out again, and its work is reported until done.
    expect((await toggle("5", "10", true)).body).toMatchObject({ status: "liked", count: 3 });
    // The user's sweep; the pipeline's item reports its own (converging's item sets no alarm).
    await expect.poll(busy, { timeout: 5_000, interval: 50 }).toBe(name === "pipeline" ? 2 : 1);
    await expect.poll(storedLikes, { timeout: 10_000, interval: 500 }).toEqual({ "10": 3, "11": 0 });
    await expect.poll(busy, { timeout: 30_000, interval: 500 }).toBe(0);
  });
});
