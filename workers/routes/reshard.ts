import { Hono } from "hono";
import { ReshardRequest, type ReshardResponse } from "../../shared/reshard";
import { readJson } from "../lib/validation";
import { requireService } from "../middleware/auth";
import { reshardStep } from "../pipeline/reshard";
import type { AppEnv } from "../types";

export const reshardRoute = new Hono<AppEnv>();

/**
 * One step of moving the counts to another count layout (service token):
 * `npm run reshard` calls it until the phase is `done` (docs/reads.md, "Resharding").
 */
reshardRoute.post("/v1/admin/reshard", requireService, async (c) => {
  const { databases, limit } = await readJson(c, ReshardRequest);
  return c.json<ReshardResponse>(await reshardStep(c.env, databases, limit));
});
