import { disclosure, type Disclosure, type Viewer } from "../../shared/privacy";
import { ApiError } from "../lib/errors";
import { isBlocked } from "./blocks";
import { readSettings } from "./item-settings";

/** One refusal for an item the user may not see and for an owner who blocks them: neither is revealed. */
const noSuchItem = () => new ApiError(404, "not_found", "No such item.");

/**
 * The checks of a like or a save, before the user's object is called: from
 * this isolate's caches, else D1 (the item's settings, then, for an item with
 * an owner, whether the owner blocks the user). No object call, no commit.
 * Turning a toggle off is always allowed: a user can take back their own like.
 * Returns how the answer's count may be shown.
 */
export async function toggleAccess(env: Env, viewer: Viewer, key: string, on: boolean): Promise<Disclosure> {
  const settings = (await readSettings(env, [key])).get(key)!;
  const shown = disclosure(settings, viewer);
  if (!on) return shown;
  if (shown === "untouched") throw noSuchItem();
  const { owner } = settings;
  if (owner !== null && viewer.userId !== null && owner !== viewer.userId && (await isBlocked(env, owner, viewer.userId))) {
    throw noSuchItem();
  }
  return shown;
}
