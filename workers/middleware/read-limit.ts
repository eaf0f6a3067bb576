import { createMiddleware } from "hono/factory";
import { enforceReadLimit } from "../limits/edge-limits";
import type { AppEnv } from "../types";

/** Public reads, limited per client address on the platform's limiter (READ_IP_LIMITER in wrangler.toml). */
export const readLimit = createMiddleware<AppEnv>(async (c, next) => {
  await enforceReadLimit(c);
  await next();
});
