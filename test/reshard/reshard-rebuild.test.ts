import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { countDatabaseIndex } from "../../shared/count-databases";
import type { RebuildResponse, RebuildTarget } from "../../shared/rebuild";
import { runRebuild, type RebuildProgress } from "../../shared/rebuild-run";
import { indexDatabaseFor } from "../../workers/stores/count-databases";
import { countDatabaseAt } from "../../workers/stores/count-layout";
import { splitItem } from "../../workers/stores/item-key";
import { call, json } from "../workers/helpers";
import { RESHARD_TEST_MS, expectAgreement, reshard, seedLoad, type Load } from "./reshard-load";

function rebuild(load: Load, target: RebuildTarget): Promise<RebuildProgress> {
  let saved: RebuildProgress | null = null;
  return runRebuild({
    target,
    // One step takes every item: spread over four databases, as a feed that the central store would answer.
    limit: 100,
    checkpoint: { load: async () => saved, save: async (progress) => void (saved = structuredClone(progress)) },
    send: async (request) => {
      const response = await call("POST", "/v1/admin/rebuild", { token: load.service, body: request });
      expect(response.status).toBe(200);
      return await json<RebuildResponse>(response);
    },
  });
}

const countRow = (key: string, databases: number) =>
  countDatabaseAt(env, countDatabaseIndex(key, databases))
    .prepare("SELECT likes FROM item_counts WHERE item_type = ?1 AND item_id = ?2")
    .bind(...splitItem(key))
    .first<{ likes: number }>();

describe("rebuilding D1 and the index after a reshard past COUNT_DATABASES", () => {
  it("rewrites a lost count row the central store still holds, and re-indexes an item counted only in a database COUNT_DATABASES does not name", async () => {
    const load = await seedLoad();
    expect(await reshard(load, 4)).toMatchObject({ phase: "done", from: 4 });
    await expectAgreement(load, 4);
    const [lost, unindexed] = load.keys.filter((key) => countDatabaseIndex(key, 4) !== 0 && key !== load.hidden) as [string, string];

    await countDatabaseAt(env, countDatabaseIndex(lost, 4)).prepare("DELETE FROM item_counts WHERE item_type = ?1 AND item_id = ?2").bind(...splitItem(lost)).run();
    expect(await rebuild(load, "d1")).toMatchObject({ finished: true, checked: load.keys.length, written: 1, failed: 0 });
    expect((await countRow(lost, 4))?.likes).toBe(load.likes.get(lost));

    const index = indexDatabaseFor(env, unindexed);
    await index.prepare("DELETE FROM item_index WHERE item = ?1").bind(unindexed).run();
    expect(await rebuild(load, "index")).toMatchObject({ finished: true, failed: 0 });
    expect(await index.prepare("SELECT item FROM item_index WHERE item = ?1").bind(unindexed).first()).toEqual({ item: unindexed });
  }, RESHARD_TEST_MS);
});
