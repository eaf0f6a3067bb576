// The pipeline reference: the converging reference (bench/reference/converging.ts)
// with its item side in the shape plaudit's pipeline has (docs/pipeline.md),
// each part done as simply as it can be, so that its distance from the
// converging reference is what that shape costs on the thread the next
// likes' answers share, and plaudit's distance from it is what plaudit does
// beyond it:
// - the user's object is the converging reference's: the contract's answer
//   after one commit, the delivery USER_DELIVERY_DELAY_MS later, the sweep
//   that redelivers what the item side has not acknowledged;
// - the item applies a change in one commit (a version per edge, so a repeat
//   changes nothing) and acknowledges the user at once; the same commit holds
//   its count, the count's sequence, and the last acknowledgement of its own
//   emissions it has heard;
// - it emits its count from its alarm, a second after the change that asks
//   for it (the changes of that second share it), as one queue message, and
//   sends it again 30 s after sending while no acknowledgement comes;
// - the queue's consumer writes the newest count of each item in its batch
//   to D1 in one batch() (a row only over an older sequence) and acknowledges
//   each item with one call;
// - an item stores an acknowledgement with its next change, or with its
//   sweep 8 s after hearing it, and then sets no alarm.
// No edges in the messages, no central store, no history, no metrics, no
// hot-item splits.
import { DurableObject } from "cloudflare:workers";
import { armedAt, contractWorker, disarmed, type ContractEnv } from "./contract";
import { ConvergingUser, countWrite, storedEdge, writeEdge, type Change } from "./converging";

/** One item's count, as its emission carries it. */
type Emission = { item: string; count: number; seq: number };

type PipelineEnv = ContractEnv & { ITEMS: DurableObjectNamespace<PipelineItem>; DB: D1Database; EMISSIONS: Queue<Emission> };

/** Plaudit's emission interval: the changes of a second share one message. */
const EMIT_AFTER_MS = 1_000;
/** Plaudit's ACK_SWEEP_MS: an acknowledgement is stored this long after it is heard, unless a change stores it first. */
const SWEEP_MS = 8_000;
/** Plaudit's first resend: an emission unacknowledged this long after its send goes again. */
const RESEND_MS = 30_000;

export { ConvergingUser };

export class PipelineItem extends DurableObject<PipelineEnv> {
  #item: string;
  #count: number;
  #seq: number;
  /** The newest sequence the consumer acknowledged, as stored. */
  #storedAck: number;
  /** The newest sequence the consumer acknowledged, as heard. */
  #heardAck: number;
  /** The last emission sent by this instance: a new one has sent nothing, so what is pending goes at its first alarm. */
  #sent: { seq: number; at: number } | null = null;
  #alarmAt: number | null = null;

  constructor(ctx: DurableObjectState, env: PipelineEnv) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    sql.exec(`CREATE TABLE IF NOT EXISTS edges (user TEXT PRIMARY KEY, state INTEGER NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS state (id INTEGER PRIMARY KEY CHECK (id = 0), item TEXT NOT NULL, count INTEGER NOT NULL, seq INTEGER NOT NULL, acked INTEGER NOT NULL);
      INSERT OR IGNORE INTO state (id, item, count, seq, acked) VALUES (0, '', 0, 0, 0);`);
    const row = sql.exec<{ item: string; count: number; seq: number; acked: number }>("SELECT item, count, seq, acked FROM state").one();
    this.#item = row.item;
    this.#count = row.count;
    this.#seq = row.seq;
    this.#storedAck = row.acked;
    this.#heardAck = row.acked;
    ctx.blockConcurrencyWhile(async () => {
      this.#alarmAt = await ctx.storage.getAlarm();
    });
  }

  /** One commit when the change is newer than the edge's; its emission goes a second later. */
  apply(item: string, change: Change): void {
    const sql = this.ctx.storage.sql;
    const edge = storedEdge(sql, change.user);
    if ((edge?.at ?? 0) >= change.at) return;
    const count = this.#count + (change.on ? 1 : 0) - (edge?.state ?? 0);
    this.ctx.storage.transactionSync(() => {
      writeEdge(sql, change);
      sql.exec("UPDATE state SET item = ?, count = ?, seq = ?, acked = ?", item, count, this.#seq + 1, this.#heardAck);
    });
    this.#item = item;
    this.#count = count;
    this.#seq += 1;
    this.#storedAck = this.#heardAck;
    this.#arm(Date.now() + EMIT_AFTER_MS);
  }

  /** The consumer wrote this sequence's count to D1. */
  ack(seq: number): void {
    if (seq <= this.#heardAck) return;
    this.#heardAck = seq;
    this.#arm(Date.now() + SWEEP_MS);
  }

  /** Stores what was heard, sends what is due, and sets no alarm once the count is acknowledged and stored. */
  override async alarm(): Promise<void> {
    this.#alarmAt = null;
    if (this.#heardAck > this.#storedAck) {
      this.ctx.storage.sql.exec("UPDATE state SET acked = ?", this.#heardAck);
      this.#storedAck = this.#heardAck;
    }
    if (this.#seq <= this.#storedAck) {
      disarmed(this.ctx.id.toString());
      return;
    }
    const now = Date.now();
    const due = this.#sent === null || this.#sent.seq < this.#seq ? now : this.#sent.at + RESEND_MS;
    if (due > now) return this.#arm(due);
    await this.env.EMISSIONS.send({ item: this.#item, count: this.#count, seq: this.#seq });
    this.#sent = { seq: this.#seq, at: now };
    this.#arm(now + RESEND_MS);
  }

  /** The alarm at `at`, unless it is already set sooner. */
  #arm(at: number): void {
    if (this.#alarmAt !== null && this.#alarmAt <= at) return;
    this.#alarmAt = at;
    armedAt(this.ctx.id.toString(), at);
    void this.ctx.storage.setAlarm(at);
  }
}

export default {
  fetch: contractWorker.fetch,
  /** The newest count of each item in the batch to D1 in one batch(), then one acknowledgement per item; a failure retries the batch. */
  async queue(batch: MessageBatch<Emission>, env: PipelineEnv): Promise<void> {
    const newest = new Map<string, Emission>();
    for (const { body } of batch.messages) if ((newest.get(body.item)?.seq ?? -1) < body.seq) newest.set(body.item, body);
    const emissions = [...newest.values()];
    await env.DB.batch(emissions.map(({ item, count, seq }) => countWrite(env.DB, item, count, seq)));
    await Promise.all(emissions.map(({ item, seq }) => env.ITEMS.get(env.ITEMS.idFromName(item)).ack(seq)));
    batch.ackAll();
  },
} satisfies ExportedHandler<PipelineEnv, Emission>;
