import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MeteredStorage } from "../../durable-objects/lib/metered-storage";
import { freshId, like, newUser } from "./helpers";

const userStub = (id: string) => env.USER_LIKES.get(env.USER_LIKES.idFromName(`u:${id}`));

describe("the alarm an object knows of", () => {
  it("goes back with a commit that rolls back, set or cleared inside it, and follows one that holds", async () => {
    const user = await newUser();
    expect((await like(user.token, freshId())).status).toBe(200);
    await runInDurableObject(userStub(user.id), async (_, state) => {
      const storage = new MeteredStorage(state.storage, "user_likes", () => undefined);
      const stored = await storage.loadAlarm();
      expect(stored).not.toBeNull();
      const later = stored! + 60_000;
      const failing = (change: () => void) => () =>
        storage.commit(() => {
          storage.sql.exec("UPDATE state SET seq = seq");
          change();
          throw new Error("the commit fails");
        });

      expect(failing(() => storage.setAlarm(later))).toThrow("the commit fails");
      expect(storage.alarmAt).toBe(stored);
      expect(await state.storage.getAlarm()).toBe(stored);

      expect(failing(() => storage.clearAlarm())).toThrow("the commit fails");
      expect(storage.alarmAt).toBe(stored);
      expect(await state.storage.getAlarm()).toBe(stored);

      storage.commit(() => storage.setAlarm(later));
      expect(storage.alarmAt).toBe(later);
      expect(await state.storage.getAlarm()).toBe(later);
    });
  });
});
