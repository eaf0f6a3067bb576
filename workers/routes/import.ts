import { Hono } from "hono";
import { itemKey } from "../../shared/counters";
import type { ImportedEdge, ImportOutcome } from "../../shared/contracts";
import { ImportRequest, type ImportResponse } from "../../shared/import";
import { withRetries } from "../../shared/retries";
import { userLikes } from "../lib/objects";
import { readJson } from "../lib/validation";
import { routeLabel } from "../metrics/route-label";
import { requireService } from "../middleware/auth";
import type { AppEnv } from "../types";

export const importRoute = new Hono<AppEnv>();

/**
 * A batch of like edges from another system (service token), each through
 * its user's object like a live like (then the item side, D1 and the central
 * store follow), carrying its target state and time (invariant I6). One call
 * per user in the batch, all at once; a retried call is harmless, as each
 * edge is idempotent (a repeat answers `duplicate`).
 */
importRoute.post("/v1/admin/import", requireService, async (c) => {
  const { edges } = await readJson(c, ImportRequest);
  const byUser = new Map<string, { index: number; edge: ImportedEdge }[]>();
  edges.forEach((edge, index) => {
    const list = byUser.get(edge.user_id) ?? [];
    list.push({ index, edge: { item: itemKey(edge.item_type, edge.item_id), on: edge.kind === "like", at: edge.liked_at } });
    byUser.set(edge.user_id, list);
  });
  const results: ImportOutcome[] = new Array<ImportOutcome>(edges.length);
  await Promise.all(
    [...byUser].map(async ([user, list]) => {
      const outcomes = await withRetries(() => userLikes(c.env, user, routeLabel(c)).importEdges(user, list.map((entry) => entry.edge)));
      list.forEach((entry, i) => (results[entry.index] = outcomes[i]!));
    }),
  );
  return c.json<ImportResponse>({ results });
});
