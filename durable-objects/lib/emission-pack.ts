import { EMISSION_VERSION, MAX_MESSAGE_BYTES, type Emission, type EmittedEdge, type Origin } from "../../shared/emissions";
import type { EdgeRow } from "./emission-outbox";

/** Room for a message's envelope (origin, ids, snapshot) next to its edges. */
const ENVELOPE_BYTES = 1_000;

/**
 * Splits one emission into messages under the queue's size limit, each with
 * its own emission id; the snapshot rides in the first.
 */
export function packEmission(
  origin: Origin,
  item: string,
  snapshot: Emission["snapshot"] | null,
  edges: readonly EdgeRow[],
  nextId: () => string,
): { body: Emission; rows: EdgeRow[] }[] {
  const messages: { body: Emission; rows: EdgeRow[] }[] = [];
  const open = () => ({ body: { v: EMISSION_VERSION, origin, emission: nextId(), item, edges: [] } as Emission, rows: [] as EdgeRow[], bytes: ENVELOPE_BYTES });
  let current = open();
  if (snapshot) current.body.snapshot = snapshot;
  for (const row of edges) {
    const edge: EmittedEdge = [row.user, row.counter, row.state, row.inc, row.seq, row.at];
    const size = JSON.stringify(edge).length + 1;
    if (current.rows.length > 0 && current.bytes + size > MAX_MESSAGE_BYTES) {
      messages.push(current);
      current = open();
    }
    current.body.edges.push(edge);
    current.rows.push(row);
    current.bytes += size;
  }
  messages.push(current);
  return messages;
}
