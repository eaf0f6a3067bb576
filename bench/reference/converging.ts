// The converging reference: the contract's like (bench/reference/contract.ts,
// the same answer after the same one commit) plus what the invariants and
// the API ask of a like after its answer, each done as simply as it can be
// (the simplest converging design, not a proven minimum), so that its
// distance from the contract is what that work costs, done so, on the thread
// the next likes' answers share:
// - I2: the item's count in the item's own object and in the regional store
//   (D1's `item_counts`, which feeds read) converges on the users' edges;
// - "readers see the change within about a second" (docs/api.md): the user's
//   object delivers a change USER_DELIVERY_DELAY_MS after its commit, as
//   plaudit's does; the item applies it in one commit of its own (a version
//   per edge, so a repeat changes nothing) and writes its absolute count to
//   D1 (one write in flight per item, the newest count after it, guarded by
//   the item's sequence), and acknowledges once a write begun after its
//   commit has succeeded;
// - I3: what is not acknowledged stays in the user's outbox, and the
//   contract's sweep alarm, 10 s after a first change, delivers it again
//   until every edge in the outbox is acknowledged at its version, then
//   empties the outbox (a repeat sends the item's count to D1 again).
// No queue, no emission, no history, no metrics, no hot-item splits.
import { DurableObject } from "cloudflare:workers";
import { USER_DELIVERY_DELAY_MS } from "../../shared/own-writes";
import { ContractUser, contractWorker, type ContractEnv } from "./contract";

type ConvergingEnv = ContractEnv & { ITEMS: DurableObjectNamespace<ConvergingItem>; DB: D1Database };

/** An edge's change, versioned by the edge's time at the user's object, which never goes back (bench/reference/contract.ts). */
export type Change = { user: string; on: boolean; at: number };

export class ConvergingUser extends ContractUser<ConvergingEnv> {
  /** What the item side acknowledged, per item: the version of the edge it holds. Memory only: the alarm's redelivery covers a new instance. */
  readonly #acknowledged = new Map<string, number>();

  protected override committed(item: string, on: boolean, at: number): void {
    setTimeout(() => void this.#deliver(item, { user: this.ctx.id.toString(), on, at }).catch(() => undefined), USER_DELIVERY_DELAY_MS);
  }

  async #deliver(item: string, change: Change): Promise<void> {
    await this.env.ITEMS.get(this.env.ITEMS.idFromName(item)).apply(item, change);
    this.#acknowledged.set(item, Math.max(this.#acknowledged.get(item) ?? 0, change.at));
  }

  /**
   * Delivers what the item side has not acknowledged, again while a like
   * that came in meanwhile adds to it, and empties the outbox in the turn
   * that found every edge in it acknowledged; a failed delivery leaves it
   * all for the runtime's alarm retry.
   */
  override async alarm(): Promise<void> {
    for (let undelivered = this.#undelivered(); undelivered.length > 0; undelivered = this.#undelivered()) {
      await Promise.all(undelivered.map(({ item, change }) => this.#deliver(item, change)));
    }
    this.#acknowledged.clear();
    super.alarm();
  }

  #undelivered(): { item: string; change: Change }[] {
    const sql = this.ctx.storage.sql;
    const user = this.ctx.id.toString();
    return this.outboxItems().flatMap((item) => {
      const edge = sql.exec<{ state: number; at: number }>("SELECT state, at FROM edges WHERE item = ?", item).one();
      return (this.#acknowledged.get(item) ?? 0) >= edge.at ? [] : [{ item, change: { user, on: edge.state === 1, at: edge.at } }];
    });
  }
}

export class ConvergingItem extends DurableObject<ConvergingEnv> {
  #count: number;
  #seq: number;
  /** The D1 write in flight, and the one promised after it to the changes committed meanwhile. */
  #writing: Promise<void> | null = null;
  #next: Promise<void> | null = null;

  constructor(ctx: DurableObjectState, env: ConvergingEnv) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    sql.exec(`CREATE TABLE IF NOT EXISTS edges (user TEXT PRIMARY KEY, state INTEGER NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS state (id INTEGER PRIMARY KEY CHECK (id = 0), count INTEGER NOT NULL, seq INTEGER NOT NULL);
      INSERT OR IGNORE INTO state (id, count, seq) VALUES (0, 0, 0);`);
    const row = sql.exec<{ count: number; seq: number }>("SELECT count, seq FROM state").one();
    this.#count = row.count;
    this.#seq = row.seq;
  }

  /** One commit when the change is newer than the edge's; then the count in D1, newest last, before the acknowledgement. */
  async apply(item: string, change: Change): Promise<void> {
    const sql = this.ctx.storage.sql;
    const edge = storedEdge(sql, change.user);
    if ((edge?.at ?? 0) < change.at) {
      const delta = (change.on ? 1 : 0) - (edge?.state ?? 0);
      this.ctx.storage.transactionSync(() => {
        writeEdge(sql, change);
        sql.exec("UPDATE state SET count = ?, seq = ?", this.#count + delta, this.#seq + 1);
      });
      this.#count += delta;
      this.#seq += 1;
    }
    await this.#written(item);
  }

  /**
   * Resolves once a D1 write begun after this call holds the item's count
   * (a write in flight began before it): at once when none is in flight,
   * else the one write that follows it, shared by every change committed
   * meanwhile. Rejects when that write fails, so the change is not acknowledged.
   */
  #written(item: string): Promise<void> {
    if (this.#next) return this.#next;
    if (!this.#writing) return this.#write(item);
    this.#next = this.#writing
      .catch(() => undefined)
      .then(() => {
        this.#next = null;
        return this.#write(item);
      });
    return this.#next;
  }

  #write(item: string): Promise<void> {
    const write = this.#writeCount(item).finally(() => {
      if (this.#writing === write) this.#writing = null;
    });
    this.#writing = write;
    return write;
  }

  async #writeCount(item: string): Promise<void> {
    await countWrite(this.env.DB, item, this.#count, this.#seq).run();
  }
}

/** A user's edge as an item object holds it; undefined before the user's first change reaches it. */
export function storedEdge(sql: SqlStorage, user: string): { state: number; at: number } | undefined {
  return sql.exec<{ state: number; at: number }>("SELECT state, at FROM edges WHERE user = ?", user).toArray()[0];
}

/** The change as the user's edge, in the caller's commit. */
export function writeEdge(sql: SqlStorage, change: Change): void {
  sql.exec(
    "INSERT INTO edges (user, state, at) VALUES (?1, ?2, ?3) ON CONFLICT (user) DO UPDATE SET state = excluded.state, at = excluded.at",
    change.user,
    change.on ? 1 : 0,
    change.at,
  );
}

/** The item's count in D1's `item_counts`, written only over an older sequence. */
export function countWrite(db: D1Database, item: string, count: number, seq: number): D1PreparedStatement {
  const colon = item.indexOf(":");
  return db
    .prepare(
      `INSERT INTO item_counts (item_type, item_id, likes, views, shares, saves, seq, updated_at) VALUES (?1, ?2, ?3, 0, 0, 0, ?4, ?5)
       ON CONFLICT (item_type, item_id) DO UPDATE SET likes = excluded.likes, seq = excluded.seq, updated_at = excluded.updated_at WHERE excluded.seq > item_counts.seq`,
    )
    .bind(item.slice(0, colon), item.slice(colon + 1), count, seq, Date.now());
}

export default contractWorker;
