import type { Sql } from "./metered-storage";
import { HyperLogLog } from "../../shared/hll";
import { mergeViewers, type ViewerPayload } from "../../shared/viewer-batch";

/**
 * An item head's unique viewers: one HyperLogLog sketch, merged from the
 * viewer batches every Worker isolate sends, in one row of the head's
 * `unique_viewers` table (created by the head's migration 5).
 *
 * Like the head's view count, the sketch moves in memory and is written with
 * the head's next event commit (`persist` inside that transaction), so a
 * crash may lose the same fraction of a second of viewers as of views. Views
 * always land at the head, never at a hot item's children, so one sketch per
 * item is the whole truth.
 */
export class UniqueViewers {
  #sketch: HyperLogLog | null = null;
  #estimate: number | null = null;
  #dirty = false;

  constructor(
    private readonly sql: Sql,
    private readonly ready: () => boolean,
  ) {}

  merge(payload: ViewerPayload): void {
    if (mergeViewers(this.#load(true), payload)) {
      this.#dirty = true;
      this.#estimate = null;
    }
  }

  estimate(): number {
    this.#estimate ??= this.#load(false)?.estimate() ?? 0;
    return this.#estimate;
  }

  /** Inside the owner's transaction, after its schema exists. */
  persist(): void {
    if (!this.#dirty || !this.#sketch) return;
    this.sql.exec(
      "INSERT INTO unique_viewers (id, sketch) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET sketch = excluded.sketch",
      this.#sketch.serialize(),
    );
    this.#dirty = false;
  }

  /** The sketch, read once; an item never viewed gets one only when `create` (16 KiB it would not otherwise need). */
  #load(create: true): HyperLogLog;
  #load(create: false): HyperLogLog | null;
  #load(create: boolean): HyperLogLog | null {
    if (this.#sketch) return this.#sketch;
    const row = this.ready() ? this.sql.exec<{ sketch: ArrayBuffer }>("SELECT sketch FROM unique_viewers WHERE id = 1").toArray()[0] : undefined;
    if (row) this.#sketch = HyperLogLog.deserialize(new Uint8Array(row.sketch));
    else if (create) this.#sketch = new HyperLogLog();
    return this.#sketch;
  }
}
