import { z } from "zod";
import { U64IdText } from "./ids";

/**
 * Asked on the events queue when a user's toggle was kept as a pending
 * intent (workers/likes/intents.ts): drain that user's intents. `attempt`
 * counts the messages sent while the user's object stayed unreachable.
 */
export const DrainIntentsRequest = z.object({
  v: z.literal(1),
  kind: z.literal("drain_intents"),
  user: U64IdText,
  attempt: z.number().int().nonnegative(),
});
export type DrainIntentsRequest = z.infer<typeof DrainIntentsRequest>;
