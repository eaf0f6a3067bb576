import { z } from "zod";
import { EMISSION_VERSION } from "./emissions";
import { DRAW_RANGE } from "./item-index";

/**
 * Passes over every indexed item, fanned out over the queue's consumers
 * (workers/pipeline/pass-*.ts): a reconciliation pass, or a rebuild of D1's
 * counts or of the central store's counts and edges (docs/rebuild.md).
 */
export const PASS_KINDS = ["reconcile", "rebuild_d1", "rebuild_central"] as const;
export type PassKind = (typeof PASS_KINDS)[number];

/** Most items (or users) one step visits: each costs an object call and a share of a store read. */
export const MAX_PASS_STEP_ITEMS = 500;

/**
 * One step of one range of a pass, as a queue message: `step` is the number
 * of steps the range had committed when this one was sent, so a redelivered
 * or duplicated step commits at most once.
 */
export const PassStep = z.object({
  v: z.literal(EMISSION_VERSION),
  kind: z.literal("pass_step"),
  pass: z.string().min(1).max(64),
  range: z.number().int().nonnegative(),
  step: z.number().int().nonnegative(),
});
export type PassStep = z.infer<typeof PassStep>;

export type RangeBounds = { db: number; lo: number; hi: number };

/**
 * Where range `range` of `ranges` lies over `databases` count databases: the
 * index rows of one database with a draw in [lo, hi). Consecutive ranges fall
 * in different databases, so the ranges walked at once spread over them.
 * `ranges` is a multiple of `databases` (rangeCount), so the ranges cover
 * every database's whole draw range exactly once.
 */
export function rangeBounds(range: number, ranges: number, databases: number): RangeBounds {
  const parts = ranges / databases;
  const part = Math.floor(range / databases);
  return { db: range % databases, lo: Math.floor((part * DRAW_RANGE) / parts), hi: Math.floor(((part + 1) * DRAW_RANGE) / parts) };
}

/** At least `wanted` ranges, a whole number of them per database. */
export function rangeCount(wanted: number, databases: number): number {
  return Math.max(1, Math.ceil(wanted / databases)) * databases;
}
