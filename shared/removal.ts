import { z } from "zod";
import { U64Id, U64IdText } from "./ids";

/**
 * Removing a user's likes and saves: an account deletion (then every trace
 * of the user's edges is wiped) or a purge of a fake account (then the
 * account is barred from liking until the host app lifts it). Both replay
 * the user's edges as unlikes through the ordinary path, so every count they
 * touched goes down exactly once (docs/privacy.md, "Removing a user").
 */
export const REMOVAL_KINDS = ["delete", "purge"] as const;
export type RemovalKind = (typeof REMOVAL_KINDS)[number];

/**
 * unliking: the user's object turns its edges off, a batch at a time, and
 * delivers them; forgetting (deletion only): each item's object drops its
 * edge row for the user once the pipeline has carried the unlike; wiping
 * (deletion only): the Worker deletes the user's rows in the central store
 * and D1; done.
 */
export const REMOVAL_PHASES = ["unliking", "forgetting", "wiping", "done"] as const;
export type RemovalPhase = (typeof REMOVAL_PHASES)[number];

/** A removal as the user's object keeps it (one row), with what is left to do. */
export type RemovalState = {
  kind: RemovalKind;
  phase: RemovalPhase;
  requestedAt: number;
  finishedAt: number | null;
  likesRemoved: number;
  savesRemoved: number;
  itemsForgotten: number;
  barred: boolean;
  /** Edges still on, changes not yet delivered, edges not yet forgotten. */
  remaining: { on: number; undelivered: number; edges: number };
};

/** Asked on the events queue by a user object whose deletion reached its wiping phase. */
export const ForgetUserRequest = z.object({ v: z.literal(1), kind: z.literal("forget_user"), user: U64IdText });
export type ForgetUserRequest = z.infer<typeof ForgetUserRequest>;

export const PurgeBody = z.object({
  user_ids: z.array(U64Id).min(1).max(1000).meta({ description: "The accounts to purge, at most 1,000 per call" }),
});

export const RemovalResponse = z.object({
  user_id: U64IdText,
  kind: z.enum(REMOVAL_KINDS).nullable().meta({ description: "null: no removal was ever asked for this user" }),
  phase: z.enum(REMOVAL_PHASES).nullable(),
  requested_at: z.iso.datetime().nullable(),
  finished_at: z.iso.datetime().nullable(),
  barred: z.boolean().meta({ description: "Liking and saving are refused (403 barred): a purged or deleted account" }),
  removed: z.object({ likes: z.number().int().nonnegative(), saves: z.number().int().nonnegative() }),
  items_forgotten: z.number().int().nonnegative().meta({ description: "Item-side edge rows dropped (deletion only)" }),
  remaining: z.object({
    on: z.number().int().nonnegative().meta({ description: "Likes and saves not yet turned off" }),
    undelivered: z.number().int().nonnegative().meta({ description: "Unlikes the item side has not acknowledged yet" }),
    edges: z.number().int().nonnegative().meta({ description: "Edge rows the user's object still holds" }),
  }),
});
export type RemovalResponse = z.infer<typeof RemovalResponse>;

export const PurgeResponse = z.object({ purged: z.array(RemovalResponse) });

export function removalResponse(user: string, state: RemovalState | null): RemovalResponse {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    user_id: user,
    kind: state?.kind ?? null,
    phase: state?.phase ?? null,
    requested_at: iso(state?.requestedAt ?? null),
    finished_at: iso(state?.finishedAt ?? null),
    barred: state?.barred ?? false,
    removed: { likes: state?.likesRemoved ?? 0, saves: state?.savesRemoved ?? 0 },
    items_forgotten: state?.itemsForgotten ?? 0,
    remaining: state?.remaining ?? { on: 0, undelivered: 0, edges: 0 },
  };
}
