import type { CountSnapshot } from "../../shared/emissions";
import type { LiveUpdate } from "../../shared/live";
import { log } from "../../shared/log";
import { metrics } from "../../metrics/recorder";
import { watchersOf } from "../stores/live-watchers";
import { liveHub } from "../lib/objects";
import { readSettings } from "../privacy/item-settings";

/**
 * Sends a batch's new counts (only snapshots that became their item's newest,
 * so a late or redelivered one never moves a client's count back) to the live
 * hubs that watch them: one D1 query
 * for the batch (which hubs watch which of its items), then one call per hub
 * carrying every item of the batch that hub watches. An item nobody watches
 * costs nothing beyond its share of that query. Each update carries its
 * item's settings (this isolate's privacy cache, else one D1 query per
 * count database for the watched items), so each hub applies the privacy
 * rules per socket (docs/live.md). Never throws: live counts are best effort,
 * and the stores' writes must not be retried for them; when the settings
 * cannot be read nothing is published, rather than counts unchecked.
 */
export async function publishLive(env: Env, snapshots: ReadonlyMap<string, CountSnapshot>): Promise<void> {
  if (snapshots.size === 0) return;
  try {
    const results = await watchersOf(env, [...snapshots.keys()], "aggregator");
    if (results.length === 0) return;
    const settings = await readSettings(env, [...new Set(results.map((row) => row.item))], "aggregator");
    const byHub = Map.groupBy(results, (row) => row.hub);
    await Promise.all(
      [...byHub].map(async ([hub, rows]) => {
        const updates: LiveUpdate[] = rows.map(({ item }) => ({
          item,
          seq: snapshots.get(item)!.seq,
          counts: snapshots.get(item)!.counts,
          settings: settings.get(item)!,
        }));
        try {
          await liveHub(env, hub, "aggregator").publish(updates);
        } catch (error) {
          log("error", "live_publish_failed", { hub, error: String(error) });
        }
      }),
    );
    metrics.count("live_publish_calls_total", {}, byHub.size);
  } catch (error) {
    log("error", "live_watchers_read_failed", { error: String(error) });
  }
}
