import { config } from "../../shared/config";
import { UNKNOWN_ITEM, type ItemSettings } from "../../shared/privacy";
import { readSettingsRows, settingsDatabases, writeSettingsRow } from "../stores/item-settings";
import type { QueryPath } from "../stores/d1";
import { unavailable } from "../lib/errors";
import { TtlCache } from "../lib/ttl-cache";
import { centralStore } from "../stores/central-tables";

const cache = new TtlCache<ItemSettings>(10_000);

/** The settings this isolate holds fresh for an item, if any. */
export function cachedSettings(key: string, now: number): ItemSettings | undefined {
  return cache.get(key, now);
}

/**
 * The settings a write may be checked against: fresh, or read less than
 * PRIVACY_STALE_MS ago (`fresh` false: the caller refreshes them after its
 * answer). See docs/privacy.md, "The like path gains no commit and no object hop".
 */
export function settingsForWrite(env: Env, key: string, now: number): { settings: ItemSettings; fresh: boolean } | undefined {
  const usable = cache.within(key, now, Math.max(config(env).PRIVACY_STALE_MS, config(env).PRIVACY_CACHE_TTL_MS));
  return usable && { settings: usable.value, fresh: usable.fresh };
}

/** Keeps settings read along with an item's counts. */
export function rememberSettings(env: Env, key: string, settings: ItemSettings, now: number): void {
  cache.put(key, settings, config(env).PRIVACY_CACHE_TTL_MS, now);
}

/**
 * Many items' settings: this isolate's cache, then one query per database
 * for the rest. When a database fails, its items get the last settings this
 * isolate knew; with none known the read fails (503), because guessing
 * "public" could show a private item.
 */
export async function readSettings(env: Env, keys: readonly string[], caller = "item_settings", path?: QueryPath): Promise<Map<string, ItemSettings>> {
  const now = Date.now();
  const found = new Map<string, ItemSettings>();
  const missing = keys.filter((key) => {
    const hit = cache.get(key, now);
    if (hit) found.set(key, hit);
    return !hit;
  });
  await Promise.all(
    [...(await settingsDatabases(env, missing))].map(async ([db, group]) => {
      try {
        for (const [key, settings] of await readSettingsRows(env, db, group, caller, path)) {
          // While a reshard copies or verifies, an item may be read from two databases: a row found wins over none.
          if (settings === UNKNOWN_ITEM && found.has(key)) continue;
          rememberSettings(env, key, settings, now);
          found.set(key, settings);
        }
      } catch {
        for (const key of group) {
          const known = cache.lastKnown(key);
          if (!known) throw unavailable("The items' settings cannot be read right now.");
          found.set(key, known);
        }
      }
    }),
  );
  return found;
}

/**
 * Replaces an item's settings, in the database that holds its counts and on
 * its central store row (a feed spread over more than two databases reads
 * them there, docs/reads.md); each write only if newer, so a retry after a
 * partial failure completes it. This isolate sees them at once; others when
 * their cached copy expires (PRIVACY_CACHE_TTL_MS).
 */
export async function writeSettings(env: Env, key: string, settings: ItemSettings, now: number): Promise<void> {
  await writeSettingsRow(env, key, settings, now);
  try {
    await (await centralStore(env))?.writeSettings(key, settings, now);
  } catch {
    throw unavailable("The item's settings could not be stored everywhere; retry the same request.");
  }
  rememberSettings(env, key, settings, now);
}
