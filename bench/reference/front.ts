// The front reference: plaudit's own Worker, every route, middleware and
// check of it (the token, the limits by tier and standing the Worker
// decides, the item's privacy settings, validation, request ids and log,
// CORS, metrics, the object call's deadline and retries, the count answered
// from the isolate's memory), over a user object like the like reference's:
// a like is one commit of the user's edge and nothing else, no outbox, no
// item side, no pipeline, no per-user limiter (plaudit's is in its object).
// So its distance from the like reference is what plaudit's front costs a
// like, and plaudit's distance from it is what plaudit's objects and their
// pipeline cost beyond one commit.
import { DurableObject } from "cloudflare:workers";
import type { ToggleRequest, ToggleResult } from "../../shared/contracts";
import plaudit from "../../workers/index";

// front.toml binds plaudit's other classes as wrangler.toml does, and a class is bound from the Worker's own module.
export { ItemCounter, ItemShard, LiveHub, MetricsAccumulator } from "../../workers/index";

export class FrontUser extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS toggles (edge TEXT PRIMARY KEY)");
  }

  /** Sets the edge of plaudit's toggle request (likes and saves apart); "changed" when it changed. One statement, so one commit. */
  toggle(request: ToggleRequest): ToggleResult {
    const edge = `${request.counter}:${request.item}`;
    const sql = request.on ? "INSERT OR IGNORE INTO toggles (edge) VALUES (?)" : "DELETE FROM toggles WHERE edge = ?";
    return { kind: this.ctx.storage.sql.exec(sql, edge).rowsWritten > 0 ? "changed" : "unchanged" };
  }
}

export default plaudit;
