import type { Context } from "hono";
import { config } from "../../shared/config";
import type { AppEnv } from "../types";
import { ipKey } from "./client-ip";
import { PLATFORM_LIMIT_PERIOD_SECONDS, refused } from "./refusals";

/** The client's address key, or null when it has none or is exempt (loopback by default). */
function clientKey(c: Context<AppEnv>): string | null {
  const address = c.req.header("cf-connecting-ip");
  if (!address || config(c.env).IP_LIMIT_EXEMPT.includes(address.trim())) return null;
  return ipKey(address);
}

async function allowed(limiter: RateLimit, key: string): Promise<boolean> {
  return (await limiter.limit({ key })).success;
}

/**
 * Limits of a like, unlike, save or unsave beyond the user's own: per client
 * address and per device, on Cloudflare's Rate Limiting binding (counted per
 * location, no storage write), so one address or one device cannot spread a
 * flood over many accounts. Runs after validation: a 429 is the last check.
 */
export async function enforceWriteLimits(c: Context<AppEnv>): Promise<void> {
  const ip = clientKey(c);
  if (ip && !(await allowed(c.env.WRITE_IP_LIMITER, ip))) {
    throw refused("ip", "Too many writes from this network; retry later.", PLATFORM_LIMIT_PERIOD_SECONDS);
  }
  const device = c.get("principal").device;
  if (device && !(await allowed(c.env.WRITE_DEVICE_LIMITER, `device:${device}`))) {
    throw refused("device", "Too many writes from this device; retry later.", PLATFORM_LIMIT_PERIOD_SECONDS);
  }
}

/** Public reads per client address: stops one client from sweeping random ids. */
export async function enforceReadLimit(c: Context<AppEnv>): Promise<void> {
  const ip = clientKey(c);
  if (ip && !(await allowed(c.env.READ_IP_LIMITER, ip))) {
    throw refused("ip", "Too many reads from this network; retry later.", PLATFORM_LIMIT_PERIOD_SECONDS);
  }
}
