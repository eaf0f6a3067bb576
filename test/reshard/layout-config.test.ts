import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { countDatabaseIndex } from "../../shared/count-databases";
import type { ReshardResponse } from "../../shared/reshard";
import { runReshard } from "../../shared/reshard-run";
import { forgetLayout } from "../../workers/stores/count-layout";
import { call, freshId, json, tokenFor } from "../workers/helpers";
import { withVars } from "../workers/idp";
import { sample, scrape } from "../workers/metrics-exposition";
import { sleep } from "./reshard-load";

/** The same deployment under another configuration of the same bindings. */
const configured = (vars: Record<string, string>, without: string[] = []): Env =>
  Object.fromEntries(Object.entries(withVars(vars)).filter(([name]) => !without.includes(name))) as unknown as Env;

describe("a configuration that disagrees with the stored count layout", () => {
  it("is refused by the reshard and counted in /metrics while COUNT_DATABASES differs from its value at the first reshard, or a database the layout uses is unbound", async () => {
    const service = await tokenFor(freshId(), { role: "service" });
    const first = configured({ COUNT_DATABASES: "2" });
    const step = (config: Env, databases: number) => call("POST", "/v1/admin/reshard", { token: service, body: { databases }, env: config });
    // An item the layout of 3 keeps out of DB_2, so a feed of it is answered while DB_2 is unbound.
    const item = Array.from({ length: 30 }, () => freshId()).find((id) => countDatabaseIndex(`post:${id}`, 3) !== 2)!;
    const problems = async (config: Env) => {
      // A feed makes the isolate read the layout again (LAYOUT_TTL_MS is 100 ms here), and the read reports what it found.
      expect((await call("POST", "/v1/counts", { body: { items: [{ item_type: "post", item_id: item }] }, env: config })).status).toBe(200);
      return sample(await scrape(service), "plaudit_count_layout_problems");
    };
    const send = async (request: { databases: number }) => {
      const response = await step(first, request.databases);
      expect(response.status).toBe(200);
      return await json<ReshardResponse>(response);
    };

    // The first reshard runs while COUNT_DATABASES is 2: the stored layout then names 3 databases, and the row keeps the 2.
    expect(await runReshard({ databases: 3, limit: 100, send, sleep })).toMatchObject({ phase: "done", from: 3, to: 3 });
    await expect.poll(() => problems(first), { timeout: 10_000, interval: 100 }).toBe(0);

    // COUNT_DATABASES changed to 1 (this project's value) after it: the history and the indexes would be looked for in DB alone.
    const errors = vi.spyOn(console, "error");
    const refused = await step(env, 4);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/COUNT_DATABASES is 1, but it was 2 when the first reshard began/);
    await expect.poll(() => problems(env), { timeout: 10_000, interval: 100 }).toBe(1);
    // Every read of the layout counts the problem; the log says it once, not once a read.
    for (let read = 0; read < 3; read++) {
      forgetLayout();
      expect(await problems(env)).toBe(1);
    }
    const said = errors.mock.calls.map(([line]) => String(line)).filter((line) => line.includes('"count_layout_problems"'));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/COUNT_DATABASES is 1, but it was 2/);
    errors.mockRestore();

    // A database the stored layout uses (DB_2) left out of wrangler.toml: refused and counted too, with the binding named.
    const unbound = configured({ COUNT_DATABASES: "2" }, ["DB_2"]);
    const missing = await step(unbound, 4);
    expect(missing.status).toBe(400);
    expect(await missing.text()).toMatch(/binds no D1 database as DB_2/);
    await expect.poll(() => problems(unbound), { timeout: 10_000, interval: 100 }).toBe(1);

    // Set back, the configuration agrees again: the count goes back to 0 and the layout in force answers done.
    await expect.poll(() => problems(first), { timeout: 10_000, interval: 100 }).toBe(0);
    expect(await send({ databases: 3 })).toMatchObject({ phase: "done", from: 3 });

    await env.DB.prepare("DELETE FROM count_layout").run();
    forgetLayout();
  }, 60_000);
});
