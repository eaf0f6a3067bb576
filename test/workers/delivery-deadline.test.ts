import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { heldCalls, hold, release } from "./fault-points";
import { freshId, like, newUser } from "./helpers";

const head = (key: string) => env.ITEM_COUNTER.get(env.ITEM_COUNTER.idFromName(key));
const user = (id: string) => env.USER_LIKES.get(env.USER_LIKES.idFromName(`u:${id}`));

// Waits out USER_DELIVERY_TIMEOUT_MS (3 s) at least once.
describe("a user's delivery to an item that does not answer", () => {
  it("is given up at its deadline and sent again, and the like counts once when the item answers", { timeout: 60_000 }, async () => {
    const id = freshId();
    const key = `post:${id}`;
    const liker = await newUser();
    await runInDurableObject(head(key), (instance) => hold(instance, "apply"));
    expect((await like(liker.token, id)).status).toBe(200);
    // The deliveries of one edge never overlap: without a deadline the first
    // would wait as long as the item does, and no second call would come.
    await expect.poll(() => runInDurableObject(head(key), (instance) => heldCalls(instance, "apply")), { timeout: 30_000, interval: 200 }).toBeGreaterThanOrEqual(2);
    expect(await user(liker.id).pendingDeliveries()).toBe(1);

    await runInDurableObject(head(key), (instance) => release(instance, "apply"));
    await expect.poll(() => user(liker.id).pendingDeliveries(), { timeout: 30_000, interval: 100 }).toBe(0);
    expect((await head(key).read()).counts.likes).toBe(1);
  });
});
