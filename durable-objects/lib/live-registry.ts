/**
 * A live hub's rows in D1's `live_watchers`: the items it has sockets for.
 * The aggregator reads them to know which hubs to publish an item's counts
 * to. Each hub writes only its own rows, one batch per change of its item set.
 */
export async function writeRegistrations(db: D1Database, hub: number, add: readonly string[], remove: readonly string[]): Promise<void> {
  const insert = db.prepare("INSERT OR IGNORE INTO live_watchers (item, hub) VALUES (?, ?)");
  const remove_ = db.prepare("DELETE FROM live_watchers WHERE item = ? AND hub = ?");
  await db.batch([...add.map((item) => insert.bind(item, hub)), ...remove.map((item) => remove_.bind(item, hub))]);
}
