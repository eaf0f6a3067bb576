import { Hono } from "hono";
import { RebuildRequest, type RebuildCursor, type RebuildResponse, type RebuildTarget } from "../../shared/rebuild";
import { invalid, unavailable } from "../lib/errors";
import { readJson } from "../lib/validation";
import { requireService } from "../middleware/auth";
import { centralStore } from "../stores/central-tables";
import { rebuildStep } from "../pipeline/rebuild";
import { countedDatabases } from "../pipeline/rebuild-index";
import type { AppEnv } from "../types";

export const rebuildRoute = new Hono<AppEnv>();

/** The walks each target's cursors may stand in. */
const PHASES: Record<RebuildTarget, readonly RebuildCursor["phase"][]> = { d1: ["items"], central: ["items", "users"], index: ["counted", "scan"] };

/**
 * One step of recomputing a store from the objects (service token):
 * `npm run rebuild` calls it until `next` is null (docs/rebuild.md).
 */
rebuildRoute.post("/v1/admin/rebuild", requireService, async (c) => {
  const { target, cursor, limit } = await readJson(c, RebuildRequest);
  if (cursor && !PHASES[target].includes(cursor.phase)) throw invalid(`The cursor belongs to another target's rebuild, not ${target}'s.`);
  if (cursor?.phase === "counted" && cursor.db >= (await countedDatabases(c.env)).length) {
    throw invalid("The cursor names a count database the count layout does not have (a reshard changed it): start over.");
  }
  const central = await centralStore(c.env).catch(() => {
    throw unavailable("The central store cannot be reached; retry shortly.", 5);
  });
  if (!central && target === "central") throw invalid("The central store is off (ALTERNATOR_ENDPOINT is empty): there is nothing to rebuild.");
  if (!central && (cursor?.phase === "users" || cursor?.phase === "scan")) throw invalid("The cursor needs the central store, which is off.");
  return c.json<RebuildResponse>(await rebuildStep(c.env, target, cursor ?? null, limit, central));
});
