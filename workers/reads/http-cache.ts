import type { Context } from "hono";
import { config } from "../../shared/config";
import { fnv1a } from "../../shared/hash";
import { GRANT_HEADER } from "../privacy/grant";
import type { AppEnv } from "../types";

/**
 * Whether an answer may differ with who asks: a token (the user's own writes,
 * items they own or may see) or a grant makes it so. Only answers to neither
 * are the same for everyone, and so the only ones a shared cache may keep.
 */
export function viewerDependent(c: Context<AppEnv>): boolean {
  return c.req.header("authorization") !== undefined || c.req.header(GRANT_HEADER) !== undefined;
}

/**
 * A weak validator of the answer's content: equal content, equal tag, so a
 * client or CDN revalidating gets a 304. Weak because fields such as
 * `took_ms` differ between equivalent answers.
 */
export function weakETag(content: unknown): string {
  const text = JSON.stringify(content);
  return `W/"${fnv1a(text).toString(16)}-${fnv1a(`${text.length}:${text}`).toString(16)}"`;
}

/** If-None-Match names this tag (or `*`): weak comparison, as RFC 9110 asks for GET. */
export function notModified(c: Context<AppEnv>, etag: string): boolean {
  const header = c.req.header("if-none-match");
  if (!header) return false;
  const bare = (tag: string) => tag.trim().replace(/^W\//, "");
  return header.split(",").some((tag) => tag.trim() === "*" || bare(tag) === bare(etag));
}

/**
 * Cache headers of a read: `public` with a short life for the answers that
 * are the same for everyone; `private, no-cache` (a browser may keep it but
 * revalidates every time, so a user reads their own write) for the others;
 * `no-store` for an answer that lacks something (partial or stale).
 */
export function setReadCaching(c: Context<AppEnv>, etag: string, complete: boolean): void {
  c.header("vary", `Authorization, ${GRANT_HEADER}`);
  if (!complete) {
    c.header("cache-control", "no-store");
    return;
  }
  c.header("etag", etag);
  if (viewerDependent(c)) {
    c.header("cache-control", "private, no-cache");
  } else {
    const maxAge = config(c.env).COUNTS_PUBLIC_MAX_AGE_SECONDS;
    c.header("cache-control", `public, max-age=${maxAge}, s-maxage=${maxAge}`);
  }
}
