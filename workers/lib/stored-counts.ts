import { COUNTER_TYPES, zeroCounts, type Counts } from "../../shared/counters";
import type { CachedCounts } from "./count-cache";

/**
 * The last counts the event pipeline wrote to D1 for an item: the fallback
 * when the item's object cannot answer and this isolate knows nothing of it.
 */
export async function storedCounts(db: D1Database, key: string): Promise<CachedCounts | undefined> {
  const split = key.indexOf(":");
  try {
    const { results } = await db
      .prepare("SELECT counter, count, updated_at FROM counters WHERE item_type = ? AND item_id = ?")
      .bind(key.slice(0, split), key.slice(split + 1))
      .all<{ counter: string; count: number; updated_at: number }>();
    if (results.length === 0) return undefined;
    const counts: Counts = zeroCounts();
    let asOf = 0;
    for (const row of results) {
      if ((COUNTER_TYPES as readonly string[]).includes(row.counter)) counts[row.counter as keyof Counts] = row.count;
      asOf = Math.max(asOf, row.updated_at);
    }
    return { counts, asOf };
  } catch {
    return undefined;
  }
}
