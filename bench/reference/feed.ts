// The one-query feed reference: answers each feed with one D1 query over the
// items' counts (plaudit's table and statement), nothing else. A design that
// reads the long tail from a store cannot beat it.
import { answer, bearerUser } from "./auth";

type FeedEnv = { AUTH_SECRET: string; DB: D1Database };
type Item = { item_type: string; item_id: string };

const SELECT = `SELECT item_type, item_id, likes FROM item_counts
  WHERE (item_type, item_id) IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?1))`;

export default {
  async fetch(request: Request, env: FeedEnv): Promise<Response> {
    if ((await bearerUser(request, env.AUTH_SECRET)) === null) return answer({ error: "unauthorized" }, 401);
    const path = new URL(request.url).pathname;
    if (path === "/healthz") return answer({ ok: true });
    if (path !== "/v1/counts") return answer({ error: "not_found" }, 404);
    const { items = [] } = (await request.json()) as { items?: Item[] };
    const { results } = await env.DB.prepare(SELECT)
      .bind(JSON.stringify(items.map((i) => [i.item_type, i.item_id])))
      .all<Item & { likes: number }>();
    const counts: Record<string, { likes: number }> = Object.fromEntries(items.map((i) => [`${i.item_type}:${i.item_id}`, { likes: 0 }]));
    for (const row of results) counts[`${row.item_type}:${row.item_id}`] = { likes: row.likes };
    return answer({ counts });
  },
};
