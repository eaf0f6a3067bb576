// The converging references (bench/reference/converging.ts and its pipeline
// shape, bench/reference/pipeline.ts) are the simplest designs
// `npm run bench -- --reference` sets plaudit's likes against for the work
// after an answer: each must itself do that work, or the comparison
// flatters it.
// Their answers, the count each converges on in the regional store (again
// after a change once an earlier count was stored), and that each reports
// its work until it is done, are checked here against a model of the edges.
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeStateDir, startReference, type LocalServer } from "../../bench/lib/server";
import { referenceBusy, referenceRows } from "./reference-state";

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

  /** Each item's likes in the reference's D1. */
  function storedLikes(): Record<string, number> {
    const rows = referenceRows<{ item_id: string; likes: number }>(server, name, "SELECT item_id, likes FROM item_counts");
    return Object.fromEntries(rows.map((row) => [row.item_id, row.likes]));
  }

  const busy = () => referenceBusy(server);

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
