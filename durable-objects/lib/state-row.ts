import type { MeteredStorage } from "./metered-storage";

/** Some of the state row's columns, as they stand when the commit ends, and what their owner does when it holds or rolls back. */
export type RowPart = { columns(): Record<string, SqlStorageValue>; committed?(): void; discarded?(): void };

/**
 * An object's one-row `state` table (id 1, created with the object's schema),
 * written once per commit however many of its parts the commit changed: the
 * counts, the placement and the emission outbox of an item's head share one
 * row, so a commit that changes any of them is billed one row written, not
 * one per table.
 */
export class StateRow {
  #parts: Map<string, RowPart> | null = null;

  constructor(private readonly storage: MeteredStorage) {}

  /** Inside a commit: `part`'s columns go into the row's one write at the commit's end; a later part of the same name replaces it. */
  stage(name: string, part: RowPart): void {
    if (this.#parts === null) {
      const parts = new Map<string, RowPart>();
      this.storage.stage(this, {
        write: () => this.#write(parts),
        committed: () => this.#end(parts, (p) => p.committed?.()),
        discarded: () => this.#end(parts, (p) => p.discarded?.()),
      });
      this.#parts = parts;
    }
    this.#parts.set(name, part);
  }

  #write(parts: ReadonlyMap<string, RowPart>): void {
    const columns = Object.entries(Object.assign({}, ...[...parts.values()].map((part) => part.columns())) as Record<string, SqlStorageValue>);
    this.storage.sql.exec(`UPDATE state SET ${columns.map(([name]) => `${name} = ?`).join(", ")} WHERE id = 1`, ...columns.map(([, value]) => value));
  }

  #end(parts: ReadonlyMap<string, RowPart>, each: (part: RowPart) => void): void {
    this.#parts = null;
    for (const part of parts.values()) each(part);
  }
}
