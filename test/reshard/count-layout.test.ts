import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { config } from "../../shared/config";
import { countDatabaseIndex } from "../../shared/count-databases";
import { readIndexes, type ReshardPhase } from "../../shared/count-layout";
import { countLayout, forgetLayout } from "../../workers/stores/count-layout";

/** The primary database's count_layout table, taken away and put back: every layout query fails meanwhile. */
async function withoutLayoutTable(work: () => Promise<void>): Promise<void> {
  await env.DB.prepare("ALTER TABLE count_layout RENAME TO count_layout_away").run();
  try {
    await work();
  } finally {
    await env.DB.prepare("ALTER TABLE count_layout_away RENAME TO count_layout").run();
  }
}

describe("the count layout when the primary database cannot be read", () => {
  it("keeps the last layout read only while younger than RESHARD_GRACE_MS - LAYOUT_TTL_MS, then fails", async () => {
    const { LAYOUT_TTL_MS: ttl, RESHARD_GRACE_MS: grace } = config(env);
    forgetLayout();
    const at = Date.now();
    const layout = await countLayout(env, at);
    await withoutLayoutTable(async () => {
      expect(await countLayout(env, at + ttl)).toEqual(layout);
      expect(await countLayout(env, at + grace - ttl - 1)).toEqual(layout);
      // Older than that, the copy could be two phases behind the row: no layout rather than a wrong one.
      await expect(countLayout(env, at + grace - ttl)).rejects.toThrow(/count_layout/);
    });
    expect(await countLayout(env, at + grace)).toEqual(layout);
  });
});

describe("the databases a read asks while a reshard moves an item", () => {
  it("asks both the old and the new database through switch, the new one alone from cleanup", () => {
    const item = Array.from({ length: 100 }, (_, i) => `post:${i}`).find((key) => countDatabaseIndex(key, 2) !== countDatabaseIndex(key, 3))!;
    const [old, next] = [countDatabaseIndex(item, 2), countDatabaseIndex(item, 3)];
    const at = (phase: ReshardPhase) => readIndexes({ databases: 2, next: { databases: 3, phase } }, item);
    expect(at("dual")).toEqual([old]);
    expect(at("copy")).toEqual([old, next]);
    expect(at("switch")).toEqual([old, next]);
    expect(at("cleanup")).toEqual([next]);
  });
});
