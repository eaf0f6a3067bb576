import { d1 } from "./d1";

/**
 * Which live hubs watch which of `items`: the rows of `live_watchers` (in
 * `DB`), which each hub writes for its own sockets (durable-objects/lib/live-registry.ts).
 */
export async function watchersOf(env: Env, items: readonly string[], caller: string): Promise<{ item: string; hub: number }[]> {
  return await d1(env, env.DB, caller).all<{ item: string; hub: number }>(
    env.DB.prepare("SELECT item, hub FROM live_watchers WHERE item IN (SELECT value FROM json_each(?))").bind(JSON.stringify(items)),
  );
}
