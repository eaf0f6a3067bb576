import { createMiddleware } from "hono/factory";
import { config } from "../../shared/config";
import { decide } from "../../shared/rate-limiter";
import { ApiError } from "../lib/errors";
import type { AppEnv } from "../types";

const MAX_TRACKED_CLIENTS = 50_000;
const tats = new Map<string, number>();

/**
 * A per-client-IP limit on public reads, kept in this isolate's memory: cheap
 * and approximate (each isolate counts on its own), enough to stop one client
 * from sweeping random ids. Off when READ_RATE_LIMIT_PER_IP_PER_MINUTE is 0.
 */
export const readLimit = createMiddleware<AppEnv>(async (c, next) => {
  const limit = config(c.env).READ_RATE_LIMIT_PER_IP_PER_MINUTE;
  if (limit > 0) {
    const ip = c.req.header("cf-connecting-ip") ?? "unknown";
    const decision = decide([{ name: ip, limit, periodMs: 60_000 }], tats, Date.now());
    if (!decision.allowed) {
      throw new ApiError(429, "rate_limited", "Too many reads from this client; retry later.", {
        retryAfter: decision.retryAfterSeconds,
      });
    }
    tats.delete(ip);
    tats.set(ip, decision.next.get(ip)!);
    if (tats.size > MAX_TRACKED_CLIENTS) tats.delete(tats.keys().next().value!);
  }
  await next();
});
