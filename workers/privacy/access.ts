import { disclosure, type Disclosure, type ItemSettings, type Viewer } from "../../shared/privacy";
import { lastKnownCounts, readCounts, type Runtime } from "../lib/count-reader";
import { ApiError } from "../lib/errors";
import { isBlocked } from "./blocks";
import { readSettings, settingsForWrite } from "./item-settings";

/** One refusal for an item the user may not see and for an owner who blocks them: neither is revealed. */
const noSuchItem = () => new ApiError(404, "not_found", "No such item.");

/**
 * What a write does to an item: turns a like or save on (refused for an item
 * the user may not see and for an owner who blocks them), turns one off
 * (always allowed: a user can take back their own like), or counts a view or
 * a share (refused for an item the user may not see).
 */
export type ItemAction = "turn_on" | "turn_off" | "event";

/** Items whose settings this isolate is refreshing after an answer: one refresh at a time per item. */
const refreshing = new Set<string>();

function refreshAfterAnswer(rt: Runtime, key: string): void {
  if (refreshing.has(key)) return;
  refreshing.add(key);
  rt.ctx.waitUntil(
    readSettings(rt.env, [key], "item_settings_refresh")
      .catch(() => undefined)
      .finally(() => refreshing.delete(key)),
  );
}

/**
 * What a write needs of its item before the user's object is called, from
 * this isolate when it can: the settings it is checked against (stale ones
 * within PRIVACY_STALE_MS, refreshed after the answer) and the last known
 * counts its answer adds to. Else one D1 query brings both (the counts read
 * also reads the settings); only then does a D1 round trip precede the
 * answer, counted with `path="critical"`.
 */
async function settingsForItem(rt: Runtime, key: string): Promise<ItemSettings> {
  // Fresh settings stand as they are; the answer reads the counts it lacks after the user's commit.
  if (!lastKnownCounts(key) && !settingsForWrite(rt.env, key, Date.now())?.fresh) {
    await readCounts(rt, key, "write_answer", "critical").catch(() => undefined);
  }
  const usable = settingsForWrite(rt.env, key, Date.now());
  if (!usable) return (await readSettings(rt.env, [key], "item_settings", "critical")).get(key)!;
  if (!usable.fresh) refreshAfterAnswer(rt, key);
  return usable.settings;
}

/**
 * The checks of a write, before the user's object is called: the item's
 * settings (settingsForItem), then, for a like or save of an item with
 * another owner, whether the owner blocks the user (cached, else D1). No
 * object call, no commit. Returns how the answer's count may be shown.
 */
export async function itemAccess(rt: Runtime, viewer: Viewer, key: string, action: ItemAction): Promise<Disclosure> {
  const settings = await settingsForItem(rt, key);
  const shown = disclosure(settings, viewer);
  if (action === "turn_off") return shown;
  if (shown === "untouched") throw noSuchItem();
  const { owner } = settings;
  if (action === "turn_on" && owner !== null && viewer.userId !== null && owner !== viewer.userId) {
    if (await isBlocked(rt.env, owner, viewer.userId)) throw noSuchItem();
  }
  return shown;
}
