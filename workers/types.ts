/** What the Worker's Hono app carries per request. */
export type Principal = { userId: string; role: "user" | "service" };

export type AppEnv = {
  Bindings: Env;
  Variables: { principal: Principal };
};
