import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { countDatabaseIndex } from "../../shared/count-databases";
import { writeSettingsRow } from "../../workers/stores/item-settings";
import { RESHARD_TEST_MS, expectAgreement, expectOnlyAtHome, reshard, seedLoad, type Load } from "./reshard-load";

/** Each item's settings row is in its database of a layout of `databases`, and in no other. */
async function expectSettingsAt(load: Load, databases: number): Promise<void> {
  for (const key of load.keys) await expectOnlyAtHome(key, databases, "item_settings", "hide_counts", key === load.hidden ? 1 : 0);
}

/** Whether some item moves from database `from` to `to` between layouts of `a` and `b` databases. */
const movesBetween = (load: Load, a: number, b: number, from: number, to: number) =>
  load.keys.some((key) => countDatabaseIndex(key, a) === from && countDatabaseIndex(key, b) === to);

describe("npm run reshard between layouts that are not multiples of each other", () => {
  it("keeps the rows of items moving both ways between the old databases, from 2 to 3 and back to 2", async () => {
    const load = await seedLoad();
    for (const key of load.keys.slice(1)) await writeSettingsRow(env, key, { owner: "owner", visibility: "public", hideCounts: false }, Date.now());
    expect(await reshard(load, 2)).toMatchObject({ phase: "done", from: 2 });
    await expectAgreement(load, 2);

    // From 2 to 3 items cross between the old databases in both directions: each old database also holds rows the copy brought in.
    expect(movesBetween(load, 2, 3, 0, 1) && movesBetween(load, 2, 3, 1, 0)).toBe(true);
    expect(await reshard(load, 3)).toMatchObject({ phase: "done", from: 3 });
    await expectAgreement(load, 3);
    await expectSettingsAt(load, 3);

    expect(movesBetween(load, 3, 2, 0, 1) && movesBetween(load, 3, 2, 1, 0)).toBe(true);
    expect(await reshard(load, 2)).toMatchObject({ phase: "done", from: 2 });
    await expectAgreement(load, 2);
    await expectSettingsAt(load, 2);
  }, RESHARD_TEST_MS);
});
