/**
 * An object's SQLite schema as numbered migrations that only grow.
 * WARNING: never edit or renumber a migration that has shipped; add a new one.
 */
export type Migration = { id: number; sql: string };

/**
 * Applies migrations once per object. An object that has never been written
 * keeps no schema at all until its first write, so reads of untouched items
 * and users cost no storage commit and leave nothing behind.
 */
export class SqlSchema {
  #ready: boolean;

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly migrations: readonly Migration[],
  ) {
    this.#ready = this.#exists();
    if (this.#ready) this.#applyPending();
  }

  /** False until the object's first write created its tables. */
  get ready(): boolean {
    return this.#ready;
  }

  /** Creates the schema if missing; call before the first write. */
  ensure(): void {
    if (this.#ready) return;
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

  #applyPending(): void {
    const sql = this.storage.sql;
    this.storage.transactionSync(() => {
      sql.exec("CREATE TABLE IF NOT EXISTS _migrations (id INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)");
      const applied = new Set(sql.exec<{ id: number }>("SELECT id FROM _migrations").toArray().map((r) => r.id));
      for (const migration of this.migrations) {
        if (applied.has(migration.id)) continue;
        sql.exec(migration.sql);
        sql.exec("INSERT INTO _migrations (id, applied_at) VALUES (?, ?)", migration.id, Date.now());
      }
    });
  }
}
