import { Hono } from "hono";
import { itemKey } from "../../shared/counters";
import type { ItemSettings } from "../../shared/privacy";
import { AdminItemParams, ItemSettingsBody } from "../../shared/schemas";
import { readJson, readParams } from "../lib/validation";
import { requireService } from "../middleware/auth";
import { writeSettings } from "../privacy/item-settings";
import { storedSettings } from "../stores/item-settings";
import type { AppEnv } from "../types";

export const itemSettings = new Hono<AppEnv>();

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function answer(params: { item_type: string; item_id: string }, settings: ItemSettings, updatedAt: number | null) {
  return {
    ...params,
    owner_id: settings.owner,
    visibility: settings.visibility,
    hide_counts: settings.hideCounts,
    updated_at: iso(updatedAt),
  };
}

/** The host app says who owns an item, who may see it and whether its counts are hidden. */
itemSettings.put("/v1/admin/items/:item_type/:item_id/settings", requireService, async (c) => {
  const params = readParams(c, AdminItemParams);
  const body = await readJson(c, ItemSettingsBody);
  const settings: ItemSettings = { owner: body.owner_id, visibility: body.visibility, hideCounts: body.hide_counts };
  const now = Date.now();
  await writeSettings(c.env, itemKey(params.item_type, params.item_id), settings, now);
  return c.json(answer(params, settings, now));
});

/** An item's settings as stored; an item never described is public with no owner. */
itemSettings.get("/v1/admin/items/:item_type/:item_id/settings", requireService, async (c) => {
  const params = readParams(c, AdminItemParams);
  const { settings, updatedAt } = await storedSettings(c.env, itemKey(params.item_type, params.item_id));
  return c.json(answer(params, settings, updatedAt));
});
