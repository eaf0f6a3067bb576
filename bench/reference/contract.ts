// The contract's reference: the one-commit like (bench/reference/like.ts)
// plus what the API (docs/api.md) and the invariants (docs/architecture.md)
// ask of every like before its answer, each done as cheaply as it can be,
// so that its distance from the one-commit like is the floor any
// implementation of the contract pays, and plaudit's distance from it is
// plaudit's own:
// - the body checked (plaudit's own check of an item reference);
// - the item's privacy settings and count, from the isolate's memory (what a
//   warm isolate has; a first sight's store read is left out, and counted
//   apart by the bench as the first-sight floor);
// - the user's limits, exact, so in the user's object, every validated
//   request counted, decided by plaudit's own limiter (shared/rate-limiter.ts);
// - the time of the user's last action on the edge, changed or not, recorded
//   as I6 asks (what a late request is then compared with);
// - an exact like through crashes (I3): the edge, the limiter's state and
//   the outbox entry that will carry the change to the item side in one
//   commit, with an alarm that redelivers it should the object die first,
//   and the user's current likes indexed by time, newest first;
// - the count answered, with its display form.
// Nothing is delivered: the alarm empties the outbox. No item side, no
// pipeline, no metrics.
import { DurableObject } from "cloudflare:workers";
import { itemKey } from "../../shared/counters";
import { plainItemRef } from "../../shared/counts-request";
import { formatCount } from "../../shared/format";
import { decide, type Limit } from "../../shared/rate-limiter";
import { TtlCache } from "../../workers/lib/ttl-cache";
import { answer, bearerUser } from "./auth";

export type ContractEnv = { AUTH_SECRET: string; RATE_LIMIT_PER_MINUTE: string; RATE_LIMIT_PER_DAY: string; USERS: DurableObjectNamespace<ContractUser> };

/** The redelivery sweep's delay; plaudit's user object sweeps a little sooner (OUTBOX_SWEEP_MS), before an idle object may hibernate. */
const SWEEP_MS = 10_000;
/** Items an isolate remembers, as plaudit's count cache bounds them. */
const REMEMBERED_ITEMS = 10_000;
const REMEMBERED_FOR_MS = 60 * 60_000;

type Toggled = { kind: "changed" | "unchanged" } | { kind: "rate_limited"; retryAfter: number };
/** The bench's items are all public with shown counts; the check is still made, as every like must make it. */
type ItemMemory = { count: number; hidden: boolean; private: boolean };

/**
 * The objects whose alarm is set and has not run, over the isolate (the
 * Worker and its objects share it under `wrangler dev`), each with when its
 * alarm is due: `/healthz` reports them and the last due time as work still
 * to do, so the bench waits for them before it reads this server's CPU,
 * without polling meanwhile. Keyed by id, so an alarm the runtime retries
 * is not counted out twice, and an alarm moved sooner is due when it now is.
 */
const armed = new Map<string, number>();

/** An object of a reference set its alarm for `at`: work `/healthz` reports until `disarmed`. */
export function armedAt(id: string, at: number): void {
  armed.set(id, at);
}

/** The object's alarm ran and left nothing to do. */
export function disarmed(id: string): void {
  armed.delete(id);
}

/** When the last armed alarm is due; 0 when none is. */
function lastDue(): number {
  let last = 0;
  for (const at of armed.values()) last = Math.max(last, at);
  return last;
}

export class ContractUser<E extends ContractEnv = ContractEnv> extends DurableObject<E> {
  #tats = new Map<string, number>();
  /** The stored outbox, kept parsed: only this object writes it. */
  #outbox = new Set<string>();
  #alarmAt: number | null = null;
  readonly #limits: Limit[];

  constructor(ctx: DurableObjectState, env: E) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    sql.exec(`CREATE TABLE IF NOT EXISTS edges (item TEXT PRIMARY KEY, state INTEGER NOT NULL, at INTEGER NOT NULL, acted_at INTEGER NOT NULL) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS likes_by_time ON edges (at, item) WHERE state = 1;
      CREATE TABLE IF NOT EXISTS state (id INTEGER PRIMARY KEY CHECK (id = 0), tats TEXT NOT NULL, outbox TEXT NOT NULL);
      INSERT OR IGNORE INTO state (id, tats, outbox) VALUES (0, '{}', '[]');`);
    const row = sql.exec<{ tats: string; outbox: string }>("SELECT tats, outbox FROM state").one();
    this.#tats = new Map(Object.entries(JSON.parse(row.tats) as Record<string, number>));
    this.#outbox = new Set(JSON.parse(row.outbox) as string[]);
    this.#limits = [
      { name: "minute", limit: Number(env.RATE_LIMIT_PER_MINUTE), periodMs: 60_000 },
      { name: "day", limit: Number(env.RATE_LIMIT_PER_DAY), periodMs: 86_400_000 },
    ];
    ctx.blockConcurrencyWhile(async () => {
      this.#alarmAt = await ctx.storage.getAlarm();
    });
  }

  /**
   * One commit: the edge, limiter and outbox when the edge changes (and the
   * alarm when none is set); the action's time alone when not. Takes the
   * fields of plaudit's own toggle request that a like needs, so plaudit's
   * Worker can call it too (bench/reference/front-pipeline.ts).
   */
  toggle({ item, on, askedAt }: { item: string; on: boolean; askedAt: number }): Toggled {
    const now = Date.now();
    const decision = decide(this.#limits, this.#tats, now);
    if (!decision.allowed) return { kind: "rate_limited", retryAfter: decision.retryAfterSeconds };
    for (const [name, tat] of decision.next) this.#tats.set(name, tat);
    const sql = this.ctx.storage.sql;
    const want = on ? 1 : 0;
    const current = sql.exec<{ state: number }>("SELECT state FROM edges WHERE item = ?", item).toArray()[0];
    if ((current?.state ?? 0) === want) {
      // A repeat's use of the limits stays in memory, as plaudit's does.
      sql.exec(
        "INSERT INTO edges (item, state, at, acted_at) VALUES (?1, 0, 0, ?2) ON CONFLICT (item) DO UPDATE SET acted_at = max(acted_at, excluded.acted_at)",
        item,
        askedAt,
      );
      return { kind: "unchanged" };
    }
    // The edge's time never goes back (a late request's is older), so it versions the edge for the item side.
    const { at } = this.ctx.storage.transactionSync(() => {
      const edge = sql
        .exec<{ at: number }>(
          "INSERT INTO edges (item, state, at, acted_at) VALUES (?1, ?2, ?3, ?3) ON CONFLICT (item) DO UPDATE SET state = excluded.state, at = max(edges.at + 1, excluded.at), acted_at = max(acted_at, excluded.acted_at) RETURNING at",
          item,
          want,
          askedAt,
        )
        .one();
      sql.exec("UPDATE state SET tats = ?, outbox = ?", JSON.stringify(Object.fromEntries(this.#tats)), JSON.stringify([...new Set(this.#outbox).add(item)]));
      return edge;
    });
    // Only once the commit held: a rolled-back one leaves the parsed list as storage has it.
    this.#outbox.add(item);
    this.committed(item, on, at);
    if (this.#alarmAt === null) {
      this.#alarmAt = now + SWEEP_MS;
      armedAt(this.ctx.id.toString(), this.#alarmAt);
      void this.ctx.storage.setAlarm(this.#alarmAt);
    }
    return { kind: "changed" };
  }

  /** A change the commit above holds, with the edge's version (bench/reference/converging.ts delivers it); the contract delivers nothing. */
  protected committed(_item: string, _on: boolean, _at: number): void {}

  /** The items the stored outbox holds. */
  protected outboxItems(): string[] {
    return [...this.#outbox];
  }

  override alarm(): void {
    this.ctx.storage.sql.exec("UPDATE state SET outbox = '[]'");
    // In the write's turn, so in its commit: left to the runtime, the fired alarm's deletion after the handler is a transaction of its own.
    void this.ctx.storage.deleteAlarm();
    this.#outbox.clear();
    this.#alarmAt = null;
    disarmed(this.ctx.id.toString());
  }
}

const items = new TtlCache<ItemMemory>(REMEMBERED_ITEMS);

function outcome(on: boolean, changed: boolean): string {
  if (on) return changed ? "liked" : "already_liked";
  return changed ? "unliked" : "not_liked";
}

export const contractWorker = {
  async fetch(request: Request, env: ContractEnv): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path === "/healthz") return answer({ ok: true, busy: armed.size, busy_until: lastDue() });
    if (path !== "/v1/like") return answer({ error: "not_found" }, 404);
    if (request.method !== "POST" && request.method !== "DELETE") return answer({ error: "method_not_allowed" }, 405);
    const user = await bearerUser(request, env.AUTH_SECRET);
    if (!user) return answer({ error: "unauthorized" }, 401);
    const ref = plainItemRef(await request.json().catch(() => null));
    if (!ref) return answer({ error: "invalid_request" }, 400);
    const key = itemKey(ref.item_type, ref.item_id);
    const now = Date.now();
    const item = items.get(key, now) ?? { count: 0, hidden: false, private: false };
    const on = request.method === "POST";
    if (item.private && on) return answer({ error: "not_found" }, 404);
    const result = await env.USERS.get(env.USERS.idFromName(user)).toggle({ item: key, on, askedAt: now });
    if (result.kind === "rate_limited") return answer({ error: "rate_limited", retry_after: result.retryAfter }, 429);
    const changed = result.kind === "changed";
    if (changed) item.count = Math.max(0, item.count + (on ? 1 : -1));
    items.put(key, item, REMEMBERED_FOR_MS, now);
    const count = item.hidden ? null : item.count;
    return answer({ status: outcome(on, changed), count, count_formatted: count === null ? null : formatCount(count), user_liked: on });
  },
};

export default contractWorker;
