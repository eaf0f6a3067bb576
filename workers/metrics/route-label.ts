import type { Context } from "hono";
import { matchedRoutes } from "hono/route";

/**
 * The route pattern that answered (`/v1/admin/users/:user_id`), never the raw
 * path, so labels stay few whatever the ids; `unmatched` for 404s and 405s.
 */
export function routeLabel(c: Context): string {
  const handlers = matchedRoutes(c).filter((r) => r.method !== "ALL");
  return handlers.at(-1)?.path ?? "unmatched";
}
