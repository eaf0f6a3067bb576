import { isNewer } from "../../shared/edges";
import type { CountSnapshot, Emission, EmittedEdge } from "../../shared/emissions";

/** One write the batch needs, and the messages (by index) it carries. */
export type Planned<T> = { value: T; messages: Set<number> };
export type PlannedEdge = { item: string; edge: EmittedEdge };

export type BatchPlan = {
  /** Newest snapshot per item. */
  snapshots: Map<string, Planned<CountSnapshot>>;
  /** Newest version per (user, item, counter). */
  edges: Map<string, Planned<PlannedEdge>>;
};

/**
 * Collapses a batch to the writes it needs: duplicates drop out, and only the
 * newest snapshot per item and the newest version per edge are written. A
 * message is carried by the writes that cover it, including a newer write that
 * superseded its own: once that newer value is stored, the message's is too.
 */
export function planBatch(emissions: readonly { index: number; emission: Emission }[]): BatchPlan {
  const snapshots = new Map<string, Planned<CountSnapshot>>();
  const edges = new Map<string, Planned<PlannedEdge>>();
  for (const { index, emission } of emissions) {
    if (emission.snapshot) {
      const known = snapshots.get(emission.item);
      if (!known) snapshots.set(emission.item, { value: emission.snapshot, messages: new Set([index]) });
      else {
        known.messages.add(index);
        if (emission.snapshot.seq > known.value.seq) known.value = emission.snapshot;
      }
    }
    for (const edge of emission.edges) {
      const key = `${edge[0]}\u0000${emission.item}\u0000${edge[1]}`;
      const known = edges.get(key);
      if (!known) edges.set(key, { value: { item: emission.item, edge }, messages: new Set([index]) });
      else {
        known.messages.add(index);
        if (isNewer({ inc: edge[3], seq: edge[4] }, { inc: known.value.edge[3], seq: known.value.edge[4] })) known.value = { item: emission.item, edge };
      }
    }
  }
  return { snapshots, edges };
}
