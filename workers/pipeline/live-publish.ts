import type { CountSnapshot } from "../../shared/emissions";
import type { LiveUpdate } from "../../shared/live";
import { log } from "../../shared/log";
import { metrics } from "../../metrics/recorder";
import { d1 } from "../stores/d1";
import { liveHub } from "../lib/objects";

/**
 * Sends a batch's new counts (only snapshots that became their item's newest,
 * so a late or redelivered one never moves a client's count back) to the live
 * hubs that watch them: one D1 query
 * for the batch (which hubs watch which of its items), then one call per hub
 * carrying every item of the batch that hub watches. An item nobody watches
 * costs nothing beyond its share of that query. Never throws: live counts are
 * best effort, and the stores' writes must not be retried for them.
 */
export async function publishLive(env: Env, snapshots: ReadonlyMap<string, CountSnapshot>): Promise<void> {
  if (snapshots.size === 0) return;
  try {
    const results = await d1(env, env.DB, "aggregator").all<{ item: string; hub: number }>(
      env.DB.prepare("SELECT item, hub FROM live_watchers WHERE item IN (SELECT value FROM json_each(?))").bind(JSON.stringify([...snapshots.keys()])),
    );
    const byHub = Map.groupBy(results, (row) => row.hub);
    await Promise.all(
      [...byHub].map(async ([hub, rows]) => {
        const updates: LiveUpdate[] = rows.map(({ item }) => ({ item, seq: snapshots.get(item)!.seq, counts: snapshots.get(item)!.counts }));
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
