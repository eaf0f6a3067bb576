import { log } from "../../shared/log";
import { metrics } from "../../metrics/recorder";

/** The object kinds as metrics name them. */
export type ObjectKind = "user_likes" | "item_counter" | "item_shard";

/** A row written once at the end of a commit (MeteredStorage.stage), and what its owner does when the commit holds or rolls back. */
export type StagedRow = { write(): void; committed(): void; discarded(): void };

/** What an object's code needs of SQL: one statement at a time. */
export type Sql = Pick<SqlStorage, "exec">;

/**
 * An object's storage, counted the way the platform bills it: every commit,
 * every row written (the SQL cursors' `rowsWritten`) and every `setAlarm`
 * (billed as a row written, yet absent from `rowsWritten`). Every write of an
 * object goes through `commit`, so the counters see all of them.
 */
export class MeteredStorage {
  #cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[] | null = null;
  #staged: Map<object, StagedRow> | null = null;
  #alarmAt: number | null = null;
  /**
   * The alarm that is running is still stored: the runtime deletes it after
   * the handler returns, in a transaction of its own, unless the handler set
   * or deleted the alarm itself.
   */
  #runningStored = false;
  /** The query interface handed to code that runs inside `commit` (and to reads). */
  readonly sql: Sql = { exec: ((query: string, ...bindings: unknown[]) => this.#exec(query, ...bindings)) as Sql["exec"] };

  /** `recorded` runs after each count, so the object sends its metrics (metrics/flush.ts). */
  constructor(
    private readonly storage: DurableObjectStorage,
    readonly object: ObjectKind,
    private readonly recorded: () => void,
  ) {}

  /** A commit is open: work done now joins it. */
  get inCommit(): boolean {
    return this.#cursors !== null;
  }

  /** One transaction, one commit: a throw rolls back everything `fn` wrote. */
  commit<T>(fn: () => T): T {
    if (this.#cursors !== null) return fn();
    this.#cursors = [];
    const staged = (this.#staged = new Map());
    try {
      const result = this.storage.transactionSync(() => {
        const value = fn();
        for (const row of staged.values()) row.write();
        return value;
      });
      const rows = this.#cursors.reduce((n, cursor) => n + cursor.rowsWritten, 0);
      metrics.count("storage_commits_total", { object: this.object });
      if (rows > 0) metrics.count("storage_rows_written_total", { object: this.object }, rows);
      this.recorded();
      for (const row of staged.values()) row.committed();
      return result;
    } catch (error) {
      for (const row of staged.values()) row.discarded();
      throw error;
    } finally {
      this.#cursors = null;
      this.#staged = null;
    }
  }

  /**
   * Inside a commit: a row that several steps of the commit change is written
   * once, at its end (a row written is billed however small the change), by
   * the first `StagedRow` its owner staged. Its owner hears whether the commit
   * held or rolled back, so what it keeps in memory never runs ahead of storage.
   */
  stage(owner: object, row: StagedRow): void {
    if (this.#staged === null) throw new Error("a row can only be staged inside a commit");
    if (!this.#staged.has(owner)) this.#staged.set(owner, row);
  }

  /**
   * Inside a commit: `undo` runs if the commit rolls back, for an owner that
   * keeps in memory what the commit wrote. It is staged as a row that writes
   * nothing, so an owner either stages a row or asks for this, not both.
   */
  onRollback(owner: object, undo: () => void): void {
    this.stage(owner, { write() {}, committed() {}, discarded: undo });
  }

  /** The same, under the platform's name, for code that takes either kind of storage. */
  transactionSync<T>(fn: () => T): T {
    return this.commit(fn);
  }

  /** The alarm time this object last set, as far as this instance knows (null: none). */
  get alarmAt(): number | null {
    return this.#alarmAt;
  }

  /**
   * Reads the stored alarm once at start-up (inside `blockConcurrencyWhile`).
   * A stored alarm already due is armed again for now: `getAlarm` answers
   * null while an alarm runs, so a due time here is one no run has taken,
   * and the local runtime can leave one so after an object was aborted in
   * the middle of its alarm (it then never fires, and a hot item never cools).
   */
  async loadAlarm(): Promise<number | null> {
    const stored = await this.storage.getAlarm();
    this.#alarmAt = stored;
    if (stored !== null && stored <= Date.now()) this.setAlarm(Date.now());
    return this.#alarmAt;
  }

  /**
   * Runs an alarm handler. The alarm that fired counts as gone from the
   * start (`getAlarm` answers null while it runs), yet stays stored until
   * the handler returns. A handler that lets it go (`clearAlarm`, through
   * `Alarm.settle`) in the turn of a commit deletes it in that commit's
   * transaction (writes of one turn share one), where the runtime's own
   * deletion after the handler would be a transaction of its own; with no
   * commit in its turn the deletion is one of its own, as the runtime's
   * would be. A handler that deletes it and then throws is not retried (the
   * runtime finds no alarm to retry), so a settle comes last, once no part
   * needs the alarm. One set for later while the object started up inside
   * this very run is still stored, so it is still known, and a settle
   * clears it.
   */
  async runAlarm(handler: () => Promise<void>): Promise<void> {
    if (this.#alarmAt === null || this.#alarmAt <= Date.now()) {
      this.#alarmAt = null;
      this.#runningStored = true;
    }
    metrics.count("storage_alarms_run_total", { object: this.object });
    this.recorded();
    try {
      await handler();
    } finally {
      this.#runningStored = false;
    }
  }

  setAlarm(at: number): void {
    this.#restoreOnRollback();
    this.#alarmAt = at;
    this.#runningStored = false;
    metrics.count("storage_alarms_set_total", { object: this.object });
    this.recorded();
    // Rejects only when the object itself is being reset (a deploy, an abort):
    // its next start arms the alarm again from what is stored, so log and go on.
    this.storage.setAlarm(at).catch((error: unknown) => log("warn", "set_alarm_failed", { object: this.object, error: String(error) }));
  }

  /** An idle object keeps no alarm: nothing wakes it until its next write. */
  clearAlarm(): void {
    if (this.#alarmAt === null && !this.#runningStored) return;
    this.#restoreOnRollback();
    this.#alarmAt = null;
    this.#runningStored = false;
    metrics.count("storage_alarms_deleted_total", { object: this.object });
    this.recorded();
    this.storage.deleteAlarm().catch((error: unknown) => log("warn", "delete_alarm_failed", { object: this.object, error: String(error) }));
  }

  /**
   * Inside a commit the alarm's write is part of the transaction, and a
   * rollback takes it back: what this instance knows of the alarm goes back
   * with it, or it would count on an alarm that was never stored.
   */
  #restoreOnRollback(): void {
    if (!this.inCommit) return;
    const alarmAt = this.#alarmAt;
    const runningStored = this.#runningStored;
    this.onRollback(this, () => {
      this.#alarmAt = alarmAt;
      this.#runningStored = runningStored;
    });
  }

  #exec(query: string, ...bindings: unknown[]) {
    const cursor = this.storage.sql.exec(query, ...bindings);
    this.#cursors?.push(cursor);
    return cursor;
  }
}
