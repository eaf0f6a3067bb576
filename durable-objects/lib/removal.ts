import type { ToggleCounter } from "../../shared/counters";
import { log } from "../../shared/log";
import type { RemovalKind, RemovalPhase, RemovalState } from "../../shared/removal";
import type { MeteredStorage } from "./metered-storage";
import type { EdgeRef } from "./user-outbox";
import { writeUserEdge } from "./user-edges";

/** Edges turned off per step: one commit, then their deliveries. */
const UNLIKE_BATCH = 100;
/** Item-side edge rows dropped per step, in parallel. */
const FORGET_BATCH = 50;
/** The next step while there is work; a step waiting on the item side or the pipeline retries after these. */
const STEP_MS = 50;
const WAIT_MS = 1_000;
const WIPE_RESEND_MS = 30_000;

/** What the removal needs of the user's object. */
export type RemovalHost = {
  storage: MeteredStorage;
  /** The user's version counter, and setting its new sequence inside a commit (the state row, with the changed edges in its outbox). */
  version: () => { inc: number; seq: number };
  writeSeq: (user: string, seq: number, changed: readonly EdgeRef[]) => void;
  /** Changes in the outbox that the item side has not acknowledged. */
  undelivered: () => number;
  /** The commit that wrote these changes held: they count as enqueued, as a like's do. */
  enqueued: (changed: readonly EdgeRef[]) => void;
  deliver: (item: string, counter: ToggleCounter) => Promise<unknown>;
  /** Asks the edge's home (and the head, when a child holds it) to drop its row; false while the pipeline still carries it. */
  forget: (user: string, item: string, counter: ToggleCounter, home: number) => Promise<boolean>;
  /** Sends the Worker the request to wipe the user's rows in the stores. */
  requestWipe: (user: string) => Promise<void>;
  /** Inside a commit: the object's tables exist. */
  ensureSchema: () => void;
  /** Arms the object's alarm for the next step. */
  wake: (at: number) => void;
};

type Row = {
  user: string;
  kind: RemovalKind;
  phase: RemovalPhase;
  requested_at: number;
  finished_at: number | null;
  likes_removed: number;
  saves_removed: number;
  items_forgotten: number;
  barred: number;
  wipe_sent_at: number;
};

/**
 * A user's removal, run by the user's object from its alarm, one step at a
 * time: every step is one commit or a batch of calls, and the job's row says
 * where it is, so a crash at any point resumes from the row, and each step is
 * safe to repeat (an unlike of an edge already off writes nothing; an item
 * forgets a row once; the stores' wipe deletes what is there).
 *
 * Invariant: the account is barred from the first commit (a like asked
 * during the removal is refused, an unlike is not), and an edge is forgotten
 * only once its unlike is delivered and the item side no longer holds it in
 * an emission, so the stores never keep a like of a removed user.
 */
export class Removal {
  /** undefined: not read from storage yet. */
  #row: Row | null | undefined;

  constructor(
    private readonly host: RemovalHost,
    private readonly ready: () => boolean,
  ) {}

  /** Liking and saving are refused. */
  get barred(): boolean {
    return this.#read()?.barred === 1;
  }

  /** A removal has work left: the object keeps its alarm. */
  get active(): boolean {
    const row = this.#read();
    return row !== null && row.phase !== "done";
  }

  /**
   * Starts (or resumes) a removal; asking again is idempotent. A deletion
   * asked after a purge carries on as a deletion; a purge asked of a deleted
   * account changes nothing.
   */
  start(user: string, kind: RemovalKind, now: number): void {
    const row = this.#read();
    if (row && (row.kind === "delete" || (row.kind === kind && row.phase !== "done"))) return;
    const next: Row = row
      ? { ...row, kind, phase: "unliking", finished_at: null, barred: 1 }
      : { user, kind, phase: "unliking", requested_at: now, finished_at: null, likes_removed: 0, saves_removed: 0, items_forgotten: 0, barred: 1, wipe_sent_at: 0 };
    this.#save(next, () => this.host.ensureSchema());
    this.host.wake(now);
  }

  /** Lifts a purge's bar (a deleted account stays barred): false when there is no such bar. */
  lift(): boolean {
    const row = this.#read();
    if (!row || row.kind !== "purge" || row.barred === 0) return row?.kind === "purge";
    this.#save({ ...row, barred: 0 });
    return true;
  }

  /** The Worker wiped the user's rows in the stores: the deletion is done, and the object keeps no id of the user. */
  wiped(now: number): void {
    const row = this.#read();
    if (!row || row.kind !== "delete" || row.phase !== "wiping") return;
    this.#save({ ...row, user: "", phase: "done", finished_at: now }, () => this.host.storage.sql.exec("UPDATE state SET user = NULL, tats = '{}'"));
  }

  state(): RemovalState | null {
    const row = this.#read();
    if (!row) return null;
    const sql = this.host.storage.sql;
    const on = sql.exec<{ n: number }>("SELECT count(*) AS n FROM edges WHERE state = 1").one().n;
    const edges = sql.exec<{ n: number }>("SELECT count(*) AS n FROM edges").one().n;
    return {
      kind: row.kind,
      phase: row.phase,
      requestedAt: row.requested_at,
      finishedAt: row.finished_at,
      likesRemoved: row.likes_removed,
      savesRemoved: row.saves_removed,
      itemsForgotten: row.items_forgotten,
      barred: row.barred === 1,
      remaining: { on, undelivered: this.host.undelivered(), edges: row.kind === "delete" ? edges : 0 },
    };
  }

  /** From the object's alarm: one step; resolves with when the next is due (null: the removal is done). Never throws. */
  async step(now = Date.now()): Promise<number | null> {
    const row = this.#read();
    if (!row || row.phase === "done") return null;
    try {
      const next = await this.#stepIn(row, now);
      return this.active ? now + next : null;
    } catch (error) {
      log("error", "removal_step_failed", { phase: row.phase, error: String(error) });
      return now + WAIT_MS;
    }
  }

  /** One step of the current phase; resolves with how long until the next. */
  async #stepIn(row: Row, now: number): Promise<number> {
    switch (row.phase) {
      case "unliking":
        return await this.#unlike(row, now);
      case "forgetting":
        return await this.#forget(row);
      case "wiping":
        if (now - row.wipe_sent_at < WIPE_RESEND_MS) return row.wipe_sent_at + WIPE_RESEND_MS - now;
        await this.host.requestWipe(row.user);
        this.#save({ ...row, wipe_sent_at: now });
        return WIPE_RESEND_MS;
      case "done":
        return WIPE_RESEND_MS;
    }
  }

  /** Turns the next batch of edges off in one commit and delivers them; the phase ends once every unlike is delivered. */
  async #unlike(row: Row, now: number): Promise<number> {
    if (this.host.undelivered() > 0) return WAIT_MS;
    const sql = this.host.storage.sql;
    const edges = sql.exec<{ item: string; counter: ToggleCounter }>("SELECT item, counter FROM edges WHERE state = 1 LIMIT ?", UNLIKE_BATCH).toArray();
    if (edges.length === 0) {
      const phase: RemovalPhase = row.kind === "delete" ? "forgetting" : "done";
      this.#save({ ...row, phase, finished_at: phase === "done" ? now : null });
      return STEP_MS;
    }
    const { inc } = this.host.version();
    let { seq } = this.host.version();
    const likes = edges.filter((e) => e.counter === "likes").length;
    this.#save({ ...row, likes_removed: row.likes_removed + likes, saves_removed: row.saves_removed + edges.length - likes }, () => {
      for (const { item, counter } of edges) {
        seq++;
        // An existing edge keeps its home: the unlike goes where the like is held.
        writeUserEdge(sql, { item, counter, state: 0, inc, seq, at: now, home: -1 });
      }
      this.host.writeSeq(row.user, seq, edges);
    });
    this.host.enqueued(edges);
    await Promise.all(edges.map(({ item, counter }) => this.host.deliver(item, counter)));
    return STEP_MS;
  }

  /** Drops the next batch of item-side rows; the user's own row goes with its item's. Then the stores' wipe. */
  async #forget(row: Row): Promise<number> {
    const sql = this.host.storage.sql;
    const edges = sql.exec<{ item: string; counter: ToggleCounter; home: number }>("SELECT item, counter, home FROM edges LIMIT ?", FORGET_BATCH).toArray();
    if (edges.length === 0) {
      this.#save({ ...row, phase: "wiping", wipe_sent_at: 0 });
      return 0;
    }
    const done = (await Promise.all(edges.map((e) => this.host.forget(row.user, e.item, e.counter, e.home)))).flatMap((ok, i) => (ok ? [edges[i]!] : []));
    if (done.length > 0) {
      this.#save({ ...row, items_forgotten: row.items_forgotten + done.length }, () => {
        for (const { item, counter } of done) sql.exec("DELETE FROM edges WHERE item = ? AND counter = ?", item, counter);
      });
    }
    // Rows still carried by the pipeline are asked again once it has had time to acknowledge them.
    return done.length === edges.length ? STEP_MS : WAIT_MS;
  }

  #read(): Row | null {
    if (this.#row !== undefined) return this.#row;
    if (!this.ready()) return null;
    this.#row = this.host.storage.sql.exec<Row>("SELECT * FROM removal").toArray()[0] ?? null;
    return this.#row;
  }

  /** One commit: the job's row, and what `alongside` writes with it; remembered once durable. */
  #save(row: Row, alongside?: () => void): void {
    this.host.storage.commit(() => {
      alongside?.();
      this.#write(row);
    });
    this.#row = row;
  }

  /** Inside a commit. */
  #write(row: Row): void {
    this.host.storage.sql.exec(
      `INSERT INTO removal (id, user, kind, phase, requested_at, finished_at, likes_removed, saves_removed, items_forgotten, barred, wipe_sent_at)
       VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET user = excluded.user, kind = excluded.kind, phase = excluded.phase, finished_at = excluded.finished_at,
         likes_removed = excluded.likes_removed, saves_removed = excluded.saves_removed, items_forgotten = excluded.items_forgotten,
         barred = excluded.barred, wipe_sent_at = excluded.wipe_sent_at`,
      row.user,
      row.kind,
      row.phase,
      row.requested_at,
      row.finished_at,
      row.likes_removed,
      row.saves_removed,
      row.items_forgotten,
      row.barred,
      row.wipe_sent_at,
    );
  }
}
