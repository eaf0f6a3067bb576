// The one-commit like reference: a like is one Durable Object commit (the
// user's edge) and nothing else: no outbox, no item side, no pipeline.
import { DurableObject } from "cloudflare:workers";
import { answer, bearerUser } from "./auth";

type LikeEnv = { AUTH_SECRET: string; USERS: DurableObjectNamespace<ReferenceUser> };

export class ReferenceUser extends DurableObject<LikeEnv> {
  constructor(ctx: DurableObjectState, env: LikeEnv) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS likes (item TEXT PRIMARY KEY)");
  }

  /** Sets the edge; true when it changed. One statement, so one commit. */
  toggle(item: string, on: boolean): boolean {
    const sql = on ? "INSERT OR IGNORE INTO likes (item) VALUES (?)" : "DELETE FROM likes WHERE item = ?";
    return this.ctx.storage.sql.exec(sql, item).rowsWritten > 0;
  }
}

export default {
  async fetch(request: Request, env: LikeEnv): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path === "/healthz") return answer({ ok: true });
    if (path !== "/v1/like") return answer({ error: "not_found" }, 404);
    const user = await bearerUser(request, env.AUTH_SECRET);
    if (!user) return answer({ error: "unauthorized" }, 401);
    const { item_id } = (await request.json()) as { item_id: string };
    const on = request.method === "POST";
    const changed = await env.USERS.get(env.USERS.idFromName(user)).toggle(item_id, on);
    const status = on ? (changed ? "liked" : "already_liked") : changed ? "unliked" : "not_liked";
    return answer({ status, count: 0, count_formatted: "0", user_liked: on });
  },
};
