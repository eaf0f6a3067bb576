import { UNKNOWN_ITEM, type ItemSettings, type Visibility } from "../../shared/privacy";
import { readIndexes, writeIndexes } from "../../shared/count-layout";
import { countLayout, groupByIndexes } from "./count-layout";
import { d1, type QueryPath } from "./d1";
import { splitItem } from "./item-key";

/** An item_settings row, as the feed read and the settings read select it. */
export type SettingsColumns = { owner_id: string | null; visibility: string | null; hide_counts: number | null };

type Row = SettingsColumns & { item_type: string; item_id: string };

/** A row's settings; an item with no row (all columns null from a join) is an unknown item. */
export function settingsFromRow(row: SettingsColumns): ItemSettings {
  if (row.visibility === null) return UNKNOWN_ITEM;
  return { owner: row.owner_id, visibility: row.visibility as Visibility, hideCounts: row.hide_counts === 1 };
}

/**
 * The databases to read items' settings from: the ones that hold their counts,
 * so the feed's one query reads both (until a reshard cleans up, an item that
 * moves is in two: a row found in either wins over none).
 */
export async function settingsDatabases(env: Env, keys: readonly string[]): Promise<Map<D1Database, string[]>> {
  const layout = await countLayout(env);
  return groupByIndexes(env, keys, (key) => readIndexes(layout, key));
}

const SELECT = `SELECT item_type, item_id, owner_id, visibility, hide_counts FROM item_settings
  WHERE (item_type, item_id) IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?1))`;

/** The settings of the items one database holds, in one query; an item with no row is an unknown item. */
export async function readSettingsRows(
  env: Env,
  db: D1Database,
  keys: readonly string[],
  caller: string,
  path?: QueryPath,
): Promise<Map<string, ItemSettings>> {
  const results = await d1(env, db, caller, undefined, path).all<Row>(db.prepare(SELECT).bind(JSON.stringify(keys.map(splitItem))));
  const rows = new Map(results.map((row) => [`${row.item_type}:${row.item_id}`, settingsFromRow(row)]));
  return new Map(keys.map((key) => [key, rows.get(key) ?? UNKNOWN_ITEM]));
}

/** One item's settings as stored, and when they were last set (null: never). */
export async function storedSettings(env: Env, key: string): Promise<{ settings: ItemSettings; updatedAt: number | null }> {
  const [type, id] = splitItem(key);
  const rows = await Promise.all(
    [...(await settingsDatabases(env, [key])).keys()].map((db) =>
      d1(env, db, "item_settings").first<SettingsColumns & { updated_at: number }>(
        db.prepare("SELECT owner_id, visibility, hide_counts, updated_at FROM item_settings WHERE item_type = ?1 AND item_id = ?2").bind(type, id),
      ),
    ),
  );
  const row = rows.reduce((newest, row) => (row && (!newest || row.updated_at > newest.updated_at) ? row : newest), null);
  return row ? { settings: settingsFromRow(row), updatedAt: row.updated_at } : { settings: UNKNOWN_ITEM, updatedAt: null };
}

/**
 * Replaces an item's settings row, only if at least as new as the stored one,
 * as the central store's copy is written: two writes that arrive out of order
 * leave both stores with the newer. While a reshard moves the item, in both
 * of its databases.
 */
export async function writeSettingsRow(env: Env, key: string, settings: ItemSettings, now: number): Promise<void> {
  const layout = await countLayout(env);
  const [type, id] = splitItem(key);
  await Promise.all(
    [...groupByIndexes(env, [key], (item) => writeIndexes(layout, item)).keys()].map((db) =>
      d1(env, db, "item_settings").run(db.prepare(UPSERT).bind(type, id, settings.owner, settings.visibility, settings.hideCounts ? 1 : 0, now)),
    ),
  );
}

/** A settings row written only over an older one (the reshard's copy writes it too). */
export const UPSERT = `INSERT INTO item_settings (item_type, item_id, owner_id, visibility, hide_counts, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
  ON CONFLICT (item_type, item_id) DO UPDATE SET owner_id = excluded.owner_id, visibility = excluded.visibility,
    hide_counts = excluded.hide_counts, updated_at = excluded.updated_at
  WHERE excluded.updated_at >= item_settings.updated_at`;

/** Up to `limit` items of one database whose owner is `user`, with their settings. */
export async function ownedSettings(env: Env, db: D1Database, user: string, limit: number, caller: string): Promise<Row[]> {
  return await d1(env, db, caller).all<Row>(
    db.prepare("SELECT item_type, item_id, owner_id, visibility, hide_counts FROM item_settings WHERE owner_id = ? LIMIT ?").bind(user, limit),
  );
}

/** Takes `user`'s name off these items of one database, at `now`, in one batch. */
export async function clearOwner(env: Env, db: D1Database, user: string, rows: readonly Row[], now: number, caller: string): Promise<void> {
  await d1(env, db, caller).batch(
    rows.map((row) =>
      db.prepare("UPDATE item_settings SET owner_id = NULL, updated_at = ?4 WHERE owner_id = ?1 AND item_type = ?2 AND item_id = ?3").bind(user, row.item_type, row.item_id, now),
    ),
  );
}
