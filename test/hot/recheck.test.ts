import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { RecheckMark } from "../../durable-objects/lib/recheck-policy";
import { countDatabaseFor } from "../../workers/stores/count-databases";
import { splitItem } from "../../workers/stores/item-key";
import { freshId, like, tokenFor } from "../workers/helpers";
import { sample, scrape } from "../workers/metrics-exposition";
import { d1Counts, settled } from "../workers/pipeline-helpers";
import { cooled, delivered, handedOver, head, keepHot, makeHot, settledLikes, users } from "./hot-helpers";

// This project rechecks every 2 s (RECHECK_INTERVAL_SECONDS in vitest.config.ts); the cron never runs here.
const WAIT = { timeout: 20_000, interval: 200 };

let service: string;

beforeAll(async () => {
  service = await tokenFor(freshId(), { role: "service" });
});

const repairs = async () => sample(await scrape(service), "plaudit_reconciliation_rechecks_total", { outcome: "repaired" });
const alarmOf = (key: string) => runInDurableObject(head(key), (_, state) => state.storage.getAlarm());
const markOf = (key: string) =>
  runInDurableObject(head(key), (_, state) => state.storage.sql.exec<RecheckMark>("SELECT at, seq FROM recheck").toArray()[0] ?? null);

describe("the recheck of hot items between reconciliation runs", () => {
  it("repairs a hot item's D1 row that drifted at its current sequence, without the cron", async () => {
    const id = freshId();
    const key = `post:${id}`;
    const likers = await makeHot(id);
    const stop = keepHot(key);
    let wrong: string[] = [];
    try {
      expect(await delivered(likers.map((u) => u.id))).toBe(true);
      expect(await handedOver(key)).toBe(true);
      expect(await settledLikes(key, likers.length)).toBe(likers.length);
      const counts = await settled(key);
      await expect.poll(async () => (await d1Counts(key))?.counts, WAIT).toEqual(counts);
      const { seq } = await head(key).emissionState();
      const before = await repairs();

      const [type, itemId] = splitItem(key);
      const corrupted = await countDatabaseFor(env, key)
        .prepare("UPDATE item_counts SET likes = likes + 7 WHERE item_type = ? AND item_id = ? AND seq = ?")
        .bind(type, itemId, seq)
        .run();
      expect(corrupted.meta.changes).toBe(1);

      await expect.poll(async () => (await d1Counts(key))?.counts, WAIT).toEqual(counts);
      // Repaired by a fresh snapshot, under a sequence newer than the one the row drifted at.
      expect((await d1Counts(key))!.seq).toBeGreaterThan(seq);
      await expect.poll(repairs, WAIT).toBeGreaterThan(before);
    } finally {
      wrong = await stop();
    }
    // Every change the test sent was refused: the item stayed hot throughout.
    expect(wrong).toEqual([]);
  }, 90_000);

  it("stops rechecking a hot item once it cools, and the head keeps no alarm", async () => {
    const id = freshId();
    const key = `post:${id}`;
    await makeHot(id);
    await expect.poll(() => markOf(key), WAIT).not.toBeNull();
    expect(await cooled(key)).toBe(true);
    // Generous: on a loaded machine the merge's last emission can take many seconds to be acknowledged.
    await expect.poll(() => alarmOf(key), { ...WAIT, timeout: 45_000 }).toBeNull();
  }, 100_000);

  it("asks for no recheck for an item neither hot nor at RECHECK_LIKES: it goes idle", async () => {
    const id = freshId();
    const key = `post:${id}`;
    const likers = await users(3);
    for (const u of likers) expect((await like(u.token, id)).status).toBe(200);
    expect(await delivered(likers.map((u) => u.id))).toBe(true);
    expect((await settled(key)).likes).toBe(3);
    await expect.poll(() => alarmOf(key), WAIT).toBeNull();
    expect(await markOf(key)).toBeNull();
  });
});
