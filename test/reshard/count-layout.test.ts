import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { config } from "../../shared/config";
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
