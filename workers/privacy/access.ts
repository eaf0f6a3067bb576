import { disclosure, type Disclosure, type ItemSettings, type Viewer } from "../../shared/privacy";
import { ApiError } from "../lib/errors";
import { isBlocked } from "./blocks";

/** One refusal for an item the user may not see and for an owner who blocks them: neither is revealed. */
const noSuchItem = () => new ApiError(404, "not_found", "No such item.");

/**
 * What a write does to an item: turns a like or save on (refused for an item
 * the user may not see and for an owner who blocks them), turns one off
 * (always allowed: a user can take back their own like), or counts a view or
 * a share (refused for an item the user may not see).
 */
export type ItemAction = "turn_on" | "turn_off" | "event";

/**
 * The checks of a write, before the user's object is called, against the
 * item's settings (workers/likes/write-settings.ts) and, for a like or save
 * of an item with another owner, whether the owner blocks the user (this
 * isolate's cache, else D1). No object call, no commit. Returns how the
 * answer's count may be shown.
 */
export async function itemAccess(env: Env, viewer: Viewer, settings: ItemSettings, action: ItemAction): Promise<Disclosure> {
  const shown = disclosure(settings, viewer);
  if (action === "turn_off") return shown;
  if (shown === "untouched") throw noSuchItem();
  const { owner } = settings;
  if (action === "turn_on" && owner !== null && viewer.userId !== null && owner !== viewer.userId) {
    if (await isBlocked(env, owner, viewer.userId)) throw noSuchItem();
  }
  return shown;
}
