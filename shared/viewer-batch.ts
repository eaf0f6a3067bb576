import { HyperLogLog } from "./hll";

/** How an isolate's viewers of one item travel to the item's head: their ids while few, a sketch once many. */
export type ViewerPayload = { ids: readonly string[] } | { sketch: Uint8Array };

/**
 * Past this many distinct viewers in one flush an isolate sends a sketch
 * instead of ids: ids are smaller below it (about 20 bytes each against a
 * sketch's 3 bytes a register, up to 16 KiB), and a sketch bounds the
 * isolate's memory for a viral item.
 */
const MAX_IDS = 2_000;

/** The distinct viewers of one item an isolate saw since its last flush. */
export class ViewerBatch {
  #ids = new Set<string>();
  #sketch: HyperLogLog | null = null;

  add(id: string): void {
    if (this.#sketch) {
      this.#sketch.add(id);
      return;
    }
    this.#ids.add(id);
    if (this.#ids.size > MAX_IDS) {
      this.#sketch = new HyperLogLog();
      for (const known of this.#ids) this.#sketch.add(known);
      this.#ids.clear();
    }
  }

  /** Takes in a batch that failed to send, so its viewers ride on the next flush. */
  absorb(other: ViewerBatch): void {
    const payload = other.payload();
    if (!payload) return;
    if ("ids" in payload) for (const id of payload.ids) this.add(id);
    else {
      this.#sketch ??= sketchOf(this.#ids);
      this.#ids.clear();
      this.#sketch.merge(HyperLogLog.deserialize(payload.sketch));
    }
  }

  payload(): ViewerPayload | undefined {
    if (this.#sketch) return { sketch: this.#sketch.serialize() };
    return this.#ids.size > 0 ? { ids: [...this.#ids] } : undefined;
  }
}

/** Adds a payload to an item's sketch; returns whether the sketch moved. */
export function mergeViewers(into: HyperLogLog, payload: ViewerPayload): boolean {
  if ("sketch" in payload) return into.merge(HyperLogLog.deserialize(payload.sketch));
  let moved = false;
  for (const id of payload.ids) moved = into.add(id) || moved;
  return moved;
}

function sketchOf(ids: Iterable<string>): HyperLogLog {
  const sketch = new HyperLogLog();
  for (const id of ids) sketch.add(id);
  return sketch;
}
