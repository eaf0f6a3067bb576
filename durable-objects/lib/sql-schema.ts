import type { Sql } from "./metered-storage";

/**
 * An object's storage as migrations use it: the platform's, or a metered one
 * (`inCommit`: a commit is open, so the migrations join it).
 */
export type SchemaStorage = { sql: Sql; transactionSync<T>(fn: () => T): T; readonly inCommit?: boolean };

/**
 * An object's SQLite schema as numbered migrations that only grow.
 * WARNING: never edit or renumber a migration that has shipped; add a new one,
 * and write its SQL literally in the object's file: a shared constant pasted
 * into a migration would silently rewrite a migration already deployed.
 */
export type Migration = { id: number; sql: string };

/**
 * The schema a new object starts with: what the migrations up to `through`
 * build (their tables, indexes and seed rows), written as one script. A new
 * object runs it instead of the chain, whose table rebuilds, copies and drops
 * made an object's first write cost several times the CPU and rows of any
 * later one; an object created before it keeps upgrading through the chain.
 * WARNING: when a migration is added, the baseline either stays at its
 * `through` or is brought level with the chain; test/workers/migrations.test.ts
 * checks that the two build the same schema and rows for every object kind.
 */
export type Baseline = { through: number; sql: string };

/**
 * Refuses a list that could apply differently on different objects: ids must
 * be positive integers, each greater than the one before.
 */
export function checkMigrations(migrations: readonly Migration[]): void {
  let previous = 0;
  for (const { id } of migrations) {
    if (!Number.isInteger(id) || id <= 0) throw new Error(`migration id ${id} is not a positive integer`);
    if (id === previous) throw new Error(`migration id ${id} appears twice`);
    if (id < previous) throw new Error(`migration id ${id} comes after ${previous}`);
    previous = id;
  }
}

/**
 * Applies migrations once per object. An object that has never been written
 * keeps no schema at all until its first write, so reads of untouched items
 * and users cost no storage commit and leave nothing behind.
 */
export class SqlSchema {
  #ready: boolean;
  /** Created inside a commit that may yet roll back: checked again before it is trusted. */
  #unconfirmed = false;

  constructor(
    private readonly storage: SchemaStorage,
    private readonly migrations: readonly Migration[],
    private readonly baseline?: Baseline,
  ) {
    checkMigrations(migrations);
    if (baseline && !migrations.some((m) => m.id === baseline.through)) throw new Error(`baseline through ${baseline.through} names no migration`);
    this.#ready = this.#exists();
    if (this.#ready) this.#applyPending();
  }

  /** False until the object's first write created its tables. */
  get ready(): boolean {
    if (this.#unconfirmed && !this.storage.inCommit) {
      this.#unconfirmed = false;
      this.#ready = this.#exists();
    }
    return this.#ready;
  }

  /**
   * Creates the schema if missing; call before the first write. Inside an
   * open commit the migrations ride on it: an object's first write is one
   * commit, not two.
   */
  ensure(): void {
    if (this.ready) return;
    this.#unconfirmed = this.storage.inCommit === true;
    this.#applyPending();
    this.#ready = true;
  }

  #exists(): boolean {
    return (
      this.storage.sql
        .exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_migrations'")
        .toArray().length > 0
    );
  }

  /**
   * Applies what this object has not applied yet, in one transaction with the
   * record of it. A pending id below the newest applied one means the list
   * was edited after it shipped: refused, since skipping it would leave this
   * object with a schema no other object has.
   */
  #applyPending(): void {
    const sql = this.storage.sql;
    const exists = this.#exists();
    const applied = exists ? new Set(sql.exec<{ id: number }>("SELECT id FROM _migrations").toArray().map((r) => r.id)) : new Set<number>();
    const baseline = exists ? undefined : this.baseline;
    // A baseline is recorded as its last id alone: every id up to an object's lowest recorded one is applied.
    const floor = baseline?.through ?? (applied.size > 0 ? Math.min(...applied) : 0);
    const pending = this.migrations.filter((m) => m.id > floor && !applied.has(m.id));
    if (pending.length === 0 && !baseline) return;
    const newest = Math.max(0, ...applied);
    const late = pending.find((m) => m.id < newest);
    if (late) throw new Error(`migration ${late.id} is older than the applied migration ${newest}; add a new one instead`);
    this.storage.transactionSync(() => {
      sql.exec("CREATE TABLE IF NOT EXISTS _migrations (id INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)");
      if (baseline) {
        sql.exec(baseline.sql);
        sql.exec("INSERT INTO _migrations (id, applied_at) VALUES (?, ?)", baseline.through, Date.now());
      }
      for (const migration of pending) {
        sql.exec(migration.sql);
        sql.exec("INSERT INTO _migrations (id, applied_at) VALUES (?, ?)", migration.id, Date.now());
      }
    });
  }
}
