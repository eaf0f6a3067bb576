import type { ItemSettings } from "../../shared/privacy";
import { lastKnownCounts, readCounts, type Runtime } from "../reads/count-reader";
import { readSettings, settingsForWrite } from "../privacy/item-settings";
import type { AfterAnswer } from "../lib/after-answer";

/** Items whose settings this isolate is refreshing after an answer: one refresh at a time per item. */
const refreshing = new Set<string>();

/**
 * Marked when the refresh begins, not when it is asked for: a request cut
 * off before its answer (its client went away) never begins its refresh, and
 * must not keep the item from the next one.
 */
function refreshAfterAnswer(rt: Runtime, after: AfterAnswer, key: string): void {
  if (refreshing.has(key)) return;
  after.add(async () => {
    if (refreshing.has(key)) return;
    refreshing.add(key);
    await readSettings(rt.env, [key], "item_settings_refresh")
      .catch(() => undefined)
      .finally(() => refreshing.delete(key));
  });
}

/**
 * What a write (like, save, view, share) needs of its item before the
 * user's object is called, from this isolate when it can: the settings it is
 * checked against (past PRIVACY_CACHE_TTL_MS but within PRIVACY_STALE_MS,
 * used and refreshed after the answer) and the last known counts its answer
 * adds to. Else one D1 query brings both (the counts read also reads the
 * settings); only then does a D1 round trip precede the answer, counted with
 * `path="critical"`.
 */
export async function settingsForItem(rt: Runtime, after: AfterAnswer, key: string): Promise<ItemSettings> {
  // Fresh settings stand as they are; the answer reads the counts it lacks after the user's commit.
  if (!lastKnownCounts(key) && !settingsForWrite(rt.env, key, Date.now())?.fresh) {
    await readCounts(rt, key, "write_answer", "critical").catch(() => undefined);
  }
  const usable = settingsForWrite(rt.env, key, Date.now());
  if (!usable) return (await readSettings(rt.env, [key], "item_settings", "critical")).get(key)!;
  if (!usable.fresh) refreshAfterAnswer(rt, after, key);
  return usable.settings;
}
