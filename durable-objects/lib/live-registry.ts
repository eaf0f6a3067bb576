import { meterD1 } from "../../metrics/d1-usage";

/**
 * A live hub's rows in D1's `live_watchers` (in the main database, `DB`):
 * the items it has sockets for. The aggregator reads them to know which hubs
 * to publish an item's counts to. Each hub writes only its own rows, one
 * batch per change of its item set, counted in the D1 metrics as the
 * Worker's calls are (caller `live_hub`).
 */
export async function writeRegistrations(env: Env, hub: number, add: readonly string[], remove: readonly string[]): Promise<void> {
  const db = env.DB;
  const insert = db.prepare("INSERT OR IGNORE INTO live_watchers (item, hub) VALUES (?, ?)");
  const remove_ = db.prepare("DELETE FROM live_watchers WHERE item = ? AND hub = ?");
  const results = await db.batch([...add.map((item) => insert.bind(item, hub)), ...remove.map((item) => remove_.bind(item, hub))]);
  meterD1(results.map((result) => result.meta), { caller: "live_hub", database: "DB", batch: true });
}
