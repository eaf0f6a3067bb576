import { z } from "zod";
import { RESHARD_PHASES } from "./count-layout";

/** Most rows one step visits: each costs a row read and, when it moves, a row written. */
export const MAX_RESHARD_BATCH = 500;
export const DEFAULT_RESHARD_BATCH = 100;
/** D1 bindings wrangler.toml can hold for counts: DB, DB_1 ... DB_63. */
export const MAX_COUNT_DATABASES = 64;

export const ReshardRequest = z
  .object({
    databases: z.number().int().min(1).max(MAX_COUNT_DATABASES).meta({ description: "The layout to reach: how many count databases (DB, DB_1, ...) hold the counts" }),
    limit: z.number().int().min(1).max(MAX_RESHARD_BATCH).default(DEFAULT_RESHARD_BATCH).meta({ description: "Most rows this step visits" }),
  })
  .strict();
export type ReshardRequest = z.infer<typeof ReshardRequest>;

const Tally = z.number().int().nonnegative();

export const ReshardResponse = z.object({
  from: z.number().int().positive().meta({ description: "Count databases of the layout being left (the current one when done)" }),
  to: z.number().int().positive().meta({ description: "Count databases of the layout being reached" }),
  phase: z.enum([...RESHARD_PHASES, "done"]).meta({ description: "Where the reshard stands: dual, copy, switch (verify), cleanup, or done" }),
  visited: Tally.meta({ description: "Rows of the old layout this phase has gone through" }),
  total: Tally.meta({ description: "Rows the old layout held when the reshard began, counted as `dual` was entered (counts and settings)" }),
  moved: Tally.meta({ description: "Rows this step copied, verified or deleted because their item changes database" }),
  repaired: Tally.meta({ description: "Rows the verification found missing or older in the new layout and copied again" }),
  wait_ms: Tally.meta({ description: "Call again after this long: the phase must outlast every isolate's copy of the layout" }),
});
export type ReshardResponse = z.infer<typeof ReshardResponse>;

/** Where a phase's walk stands: a count database of the old layout, its table, and the last key visited. */
export const ReshardCursor = z.object({
  db: z.number().int().nonnegative(),
  table: z.enum(["item_counts", "item_settings"]),
  after: z.tuple([z.string(), z.string()]),
});
export type ReshardCursor = z.infer<typeof ReshardCursor>;
