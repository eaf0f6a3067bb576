import { z } from "zod";

/**
 * A rebuild recomputes a store from the objects, which hold the truth:
 * - `d1`: every indexed item's counts (and today's history row) in its count database;
 * - `central`: every indexed item's counts, then every indexed user's edges (both directions);
 * - `index`: the index of every item from the count databases' rows, and the
 *   index of users from the central store's edges (a backfill for data counted
 *   before the indexes existed, or an index restored from an old backup).
 */
export const REBUILD_TARGETS = ["d1", "central", "index"] as const;
export type RebuildTarget = (typeof REBUILD_TARGETS)[number];

/** Most keys (items or users) one call visits; each costs an object call and a store read or two. */
export const MAX_REBUILD_BATCH = 100;
export const DEFAULT_REBUILD_BATCH = 50;
/** Most edges one call writes, so a user with very many likes is spread over several calls. */
export const MAX_REBUILD_EDGES = 500;

const Tally = z.number().int().nonnegative();

export const RebuildResponse = z.object({
  target: z.enum(REBUILD_TARGETS),
  checked: Tally.meta({ description: "Keys visited: items, or users in the edge phase" }),
  written: Tally.meta({ description: "Counts (or index rows) the store lacked or held older, now written" }),
  unchanged: Tally.meta({ description: "Counts the store already held exactly" }),
  repaired: Tally.meta({ description: "Items whose store held a wrong count at the current version: their object emitted a fresh snapshot" }),
  edges_written: Tally.meta({ description: "Edges the central store lacked or held older, now written" }),
  edges_unchanged: Tally.meta({ description: "Edges the central store already held" }),
  failed: z.array(z.object({ key: z.string(), error: z.string() })).meta({ description: "Keys that could not be rebuilt in this call (run again: it is idempotent)" }),
  next: z.string().nullable().meta({ description: "Pass back as `cursor`; null when the rebuild is complete" }),
  progress: z.number().min(0).max(1).meta({ description: "How far the walk has gone, estimated from the cursor" }),
});
export type RebuildResponse = z.infer<typeof RebuildResponse>;

/**
 * Where a walk stands. Items and users are walked in index order by
 * (draw, key), so two keys with the same draw are both visited; `edge` is
 * the last edge written of a user not yet finished; `db` and `scan` place the
 * index backfill in a count database's rows or in the central store's scan.
 */
export const RebuildCursor = z.discriminatedUnion("phase", [
  z.object({ phase: z.literal("items"), draw: z.number().int(), key: z.string() }),
  z.object({ phase: z.literal("users"), draw: z.number().int(), key: z.string(), edge: z.string().optional() }),
  z.object({ phase: z.literal("counted"), db: z.number().int().nonnegative(), key: z.string() }),
  z.object({ phase: z.literal("scan"), after: z.record(z.string(), z.object({ S: z.string() })).optional(), scanned: Tally }),
]);
export type RebuildCursor = z.infer<typeof RebuildCursor>;

/** Cursors travel as opaque base64url text, so clients keep them without reading them. */
export function encodeCursor(cursor: RebuildCursor): string {
  return btoa(JSON.stringify(cursor)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** The cursor a text holds, or null when it holds none (a 400 for the caller). */
export function decodeCursor(text: string): RebuildCursor | null {
  try {
    const result = RebuildCursor.safeParse(JSON.parse(atob(text.replaceAll("-", "+").replaceAll("_", "/"))));
    return result.success ? result.data : null;
  } catch {
    return null;
  }
}

export const RebuildRequest = z.object({
  target: z.enum(REBUILD_TARGETS, { error: "must be d1, central or index" }).meta({ description: "The store to recompute" }),
  cursor: z
    .string()
    .max(2_000)
    .transform((value, ctx) => {
      const cursor = decodeCursor(value);
      if (cursor === null) ctx.addIssue({ code: "custom", message: "must be a next this endpoint answered" });
      return cursor ?? z.NEVER;
    })
    .nullish()
    .meta({ description: "The `next` of the previous call; absent (or null) to start from the beginning" }),
  limit: z.number().int().min(1).max(MAX_REBUILD_BATCH).default(DEFAULT_REBUILD_BATCH).meta({ description: "Keys to visit in this call" }),
});
export type RebuildRequest = z.output<typeof RebuildRequest>;
