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
// - as plaudit's emitter does, it sends its count from a timer a second
//   after a change (the changes of that second share one queue message),
//   and the commit of a burst's first change sets its one alarm, the sweep,
//   8 s later: it stores an acknowledgement no change stored, resends what
//   is still unacknowledged 30 s after its send, and sets no alarm once the
//   newest count is acknowledged and stored;
// - the queue's consumer writes the newest count of each item in its batch
//   to D1 in one batch() (a row only over an older sequence) and acknowledges
//   each item with one call.
// No edges in the messages, no central store, no history, no metrics, no
// hot-item splits; a resend waits 30 s every time (plaudit's wait doubles),
// and so does a send that failed (plaudit's backs off from 1 s).
import { DurableObject } from "cloudflare:workers";
import { ACK_SWEEP_MS, EMIT_INTERVAL_MS } from "../../shared/object-windows";
import { armedAt, contractWorker, disarmed, type ContractEnv } from "./contract";
import { ConvergingUser, countWrite, storedEdge, writeEdge, type Change } from "./converging";

/** One item's count, as its emission carries it. */
export type Emission = { item: string; count: number; seq: number };

export type PipelineEnv = ContractEnv & { ITEMS: DurableObjectNamespace<PipelineItem>; DB: D1Database; EMISSIONS: Queue<Emission> };

/** Plaudit's first resend: an emission unacknowledged this long after its send goes again. */
const RESEND_MS = 30_000;

// pipeline.toml binds the users' class by name, and a class is bound from the Worker's own module.
export { ConvergingUser };

export class PipelineItem extends DurableObject<PipelineEnv> {
  #item: string;
  #count: number;
  #seq: number;
  /** The newest sequence the consumer acknowledged, as stored. */
  #storedAck: number;
  /** The newest sequence the consumer acknowledged, as heard. */
  #heardAck: number;
  /** The last emission this instance sent: a new one has sent nothing, so its sweep sends what is unacknowledged. */
  #sent: { seq: number; at: number } | null = null;
  #sendTimer: ReturnType<typeof setTimeout> | null = null;
  /** A send is on its way: the sweep leaves the count to it rather than sending it twice. */
  #sending = false;
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
      // What the last instance sent lived in its memory: an unacknowledged count goes again within a second, as plaudit's emitter does.
      if (this.#seq > this.#storedAck) this.#arm(Date.now() + EMIT_INTERVAL_MS);
    });
  }

  /** One commit when the change is newer than the edge's. */
  apply(item: string, change: Change): void {
    const sql = this.ctx.storage.sql;
    const edge = storedEdge(sql, change.user);
    if ((edge?.at ?? 0) >= change.at) return;
    const count = this.#count + (change.on ? 1 : 0) - (edge?.state ?? 0);
    this.ctx.storage.transactionSync(() => {
      writeEdge(sql, change);
      // The item's name too: an object started by its alarm may not be told its name.
      sql.exec("UPDATE state SET item = ?, count = ?, seq = ?, acked = ?", item, count, this.#seq + 1, this.#heardAck);
    });
    this.#item = item;
    this.#count = count;
    this.#seq += 1;
    this.#storedAck = this.#heardAck;
    this.#sendTimer ??= setTimeout(() => {
      this.#sendTimer = null;
      void this.#send();
    }, EMIT_INTERVAL_MS);
    this.#arm(Date.now() + ACK_SWEEP_MS);
  }

  /** The consumer wrote this sequence's count to D1; one that comes after the sweep brings a sweep of its own. */
  ack(seq: number): void {
    if (seq <= this.#heardAck) return;
    this.#heardAck = seq;
    this.#arm(Date.now() + ACK_SWEEP_MS);
  }

  /** The sweep: stores what was heard, resends what is due, and sets no alarm once the newest count is acknowledged and stored. */
  override async alarm(): Promise<void> {
    this.#alarmAt = null;
    if (this.#heardAck > this.#storedAck) {
      this.ctx.storage.sql.exec("UPDATE state SET acked = ?", this.#heardAck);
      this.#storedAck = this.#heardAck;
    }
    if (this.#seq <= this.#storedAck) {
      // In the acknowledgement's turn, so in its commit when it made one: left to the runtime, the fired alarm's deletion after the handler is a transaction of its own.
      void this.ctx.storage.deleteAlarm();
      disarmed(this.ctx.id.toString());
      return;
    }
    const now = Date.now();
    // A send of the newest count is waiting on its timer or on its way: look again when a resend would be due.
    if (this.#sendTimer !== null || this.#sending) {
      this.#arm(now + RESEND_MS);
      return;
    }
    const sentAt = this.#sent?.seq === this.#seq ? this.#sent.at : null;
    if (sentAt !== null && sentAt + RESEND_MS > now) return this.#arm(sentAt + RESEND_MS);
    // Sent or not, the next look is a resend's wait away: a failed send is not tried again at once.
    await this.#send();
    this.#arm(now + RESEND_MS);
  }

  /** The count as it stands now, as one queue message; a failed send is the sweep's to try again. */
  async #send(): Promise<void> {
    const emission = { item: this.#item, count: this.#count, seq: this.#seq };
    this.#sending = true;
    try {
      await this.env.EMISSIONS.send(emission);
      this.#sent = { seq: emission.seq, at: Date.now() };
    } catch {
      // The sweep finds the count unacknowledged and sends it again.
    } finally {
      this.#sending = false;
    }
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
