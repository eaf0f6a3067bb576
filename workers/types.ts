import type { Viewer } from "../shared/privacy";

/** What the Worker's Hono app carries per request. */
export type Principal = {
  userId: string;
  role: "user" | "service";
  /** The token's device claim, when it has one: the key of the per-device limit. */
  device?: string;
  /** The account's standing as the token states it: a name from STANDING_TIERS selects stricter limits. */
  standing?: string;
};

export type AppEnv = {
  Bindings: Env;
  Variables: { principal: Principal; viewer: Viewer };
};
