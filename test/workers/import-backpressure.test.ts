import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { EMISSION_VERSION, type RecheckRequest } from "../../shared/emissions";
import { call, freshId, json, tokenFor } from "./helpers";
import { d1Counts } from "./pipeline-helpers";

const userStub = (id: string) => env.USER_LIKES.get(env.USER_LIKES.idFromName(`u:${id}`));

describe("the import's backpressure", () => {
  it("refuses a batch with 503 and a Retry-After while the event queue holds more than IMPORT_MAX_QUEUE_BACKLOG messages, applying none of it, and takes it once the queue drained", async () => {
    const [user, item] = [freshId(), freshId()];
    const edges = [{ user_id: user, item_id: item, item_type: "post", liked_at: "2024-05-01T12:00:00Z", kind: "like" }];
    const service = await tokenFor(freshId(), { role: "service" });
    const bindings = { ...env, IMPORT_MAX_QUEUE_BACKLOG: "3" } as Env;

    // Real messages on the real queue: rechecks of items nobody counted, which the consumer answers as cheap no-ops.
    const rechecks = Array.from({ length: 20 }, (): { body: RecheckRequest } => ({ body: { v: EMISSION_VERSION, kind: "recheck", item: `post:${freshId()}` } }));
    await env.EVENTS.sendBatch(rechecks);
    await expect.poll(async () => (await env.EVENTS.metrics()).backlogCount).toBeGreaterThan(3);

    const refused = await call("POST", "/v1/admin/import", { token: service, body: { edges }, env: bindings });
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await json(refused)).toMatchObject({ error: "import_backpressure" });
    expect((await userStub(user).hasLiked([`post:${item}`], "likes"))[`post:${item}`]).toBe(false);

    await expect.poll(async () => (await env.EVENTS.metrics()).backlogCount, { timeout: 20_000 }).toBeLessThanOrEqual(3);
    const taken = await call("POST", "/v1/admin/import", { token: service, body: { edges }, env: bindings });
    expect(taken.status).toBe(200);
    expect(await json(taken)).toEqual({ results: ["applied"] });
    // The answer came after the item side took the edge: nothing is left to deliver.
    expect(await userStub(user).pendingDeliveries()).toBe(0);
    await expect.poll(async () => (await d1Counts(`post:${item}`))?.counts.likes, { timeout: 20_000 }).toBe(1);
  });
});
