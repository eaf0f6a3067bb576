import { config } from "../../shared/config";
import { d1, type QueryPath } from "../lib/d1";
import { UNKNOWN_ITEM, type ItemSettings, type Visibility } from "../../shared/privacy";
import { byCountDatabase } from "../lib/count-databases";
import { unavailable } from "../lib/errors";
import { TtlCache } from "./ttl-cache";

/** An item_settings row, as the feed read and the settings read select it. */
export type SettingsColumns = { owner_id: string | null; visibility: string | null; hide_counts: number | null };

const cache = new TtlCache<ItemSettings>(10_000);

/** A row's settings; an item with no row (all columns null from a join) is an unknown item. */
export function settingsFromRow(row: SettingsColumns): ItemSettings {
  if (row.visibility === null) return UNKNOWN_ITEM;
  return { owner: row.owner_id, visibility: row.visibility as Visibility, hideCounts: row.hide_counts === 1 };
}

/** The database that holds an item's settings: the one that holds its counts, so the feed's one query reads both. */
function databasesOf(env: Env, keys: readonly string[]): Map<D1Database, string[]> {
  return byCountDatabase(env, keys, (key) => key);
}

function splitKey(key: string): [string, string] {
  const colon = key.indexOf(":");
  return [key.slice(0, colon), key.slice(colon + 1)];
}

/** The settings this isolate holds fresh for an item, if any. */
export function cachedSettings(key: string, now: number): ItemSettings | undefined {
  return cache.get(key, now);
}

/**
 * The settings a write may be checked against: fresh, or read less than
 * PRIVACY_STALE_MS ago (`fresh` false: the caller refreshes them after its
 * answer). See docs/privacy.md, "A like accepted just before a change lands".
 */
export function settingsForWrite(env: Env, key: string, now: number): { settings: ItemSettings; fresh: boolean } | undefined {
  const usable = cache.within(key, now, Math.max(config(env).PRIVACY_STALE_MS, config(env).PRIVACY_CACHE_TTL_MS));
  return usable && { settings: usable.value, fresh: usable.fresh };
}

/** Keeps settings read along with an item's counts. */
export function rememberSettings(env: Env, key: string, settings: ItemSettings, now: number): void {
  cache.put(key, settings, config(env).PRIVACY_CACHE_TTL_MS, now);
}

const SELECT = `SELECT item_type, item_id, owner_id, visibility, hide_counts FROM item_settings
  WHERE (item_type, item_id) IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?1))`;

type Row = SettingsColumns & { item_type: string; item_id: string };

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
    [...databasesOf(env, missing)].map(async ([db, group]) => {
      try {
        const results = await d1(env, db, caller, undefined, path).all<Row>(db.prepare(SELECT).bind(JSON.stringify(group.map(splitKey))));
        const rows = new Map(results.map((row) => [`${row.item_type}:${row.item_id}`, settingsFromRow(row)]));
        for (const key of group) {
          const settings = rows.get(key) ?? UNKNOWN_ITEM;
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

/** One item's settings as stored, and when they were last set (null: never). */
export async function storedSettings(env: Env, key: string): Promise<{ settings: ItemSettings; updatedAt: number | null }> {
  const [db] = databasesOf(env, [key]).keys();
  const [type, id] = splitKey(key);
  const row = await d1(env, db!, "item_settings").first<SettingsColumns & { updated_at: number }>(
    db!.prepare("SELECT owner_id, visibility, hide_counts, updated_at FROM item_settings WHERE item_type = ?1 AND item_id = ?2").bind(type, id),
  );
  return row ? { settings: settingsFromRow(row), updatedAt: row.updated_at } : { settings: UNKNOWN_ITEM, updatedAt: null };
}

/**
 * Replaces an item's settings. This isolate sees them at once; others when
 * their cached copy expires (PRIVACY_CACHE_TTL_MS).
 */
export async function writeSettings(env: Env, key: string, settings: ItemSettings, now: number): Promise<void> {
  const [db] = databasesOf(env, [key]).keys();
  const [type, id] = splitKey(key);
  await d1(env, db!, "item_settings").run(
    db!
      .prepare(
        `INSERT INTO item_settings (item_type, item_id, owner_id, visibility, hide_counts, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (item_type, item_id) DO UPDATE SET owner_id = excluded.owner_id, visibility = excluded.visibility,
           hide_counts = excluded.hide_counts, updated_at = excluded.updated_at`,
      )
      .bind(type, id, settings.owner, settings.visibility, settings.hideCounts ? 1 : 0, now),
  );
  rememberSettings(env, key, settings, now);
}
