// What a single object would have built from a trace of its writes: a
// trace-driven simulation of one FIFO server at a fixed rate. Assumptions:
// the writes of each second arrive evenly over it; the object serves
// `capacity` writes a second, no more and no fewer, one at a time, in order;
// nothing times out, is retried or dropped, so every write in the trace waits
// its turn; the object serves nothing but these writes.

export type QueueResult = {
  /** The largest number of writes that arrived in one second. */
  peakLoad: number;
  /** The longest a write would have waited from its arrival to its commit, in seconds. */
  peakDelaySeconds: number;
  /** Writes still waiting at the end of the trace. */
  backlogAtEnd: number;
};

/** `perSecond`: writes arriving in each second, in order; `capacity`: writes the object serves a second. */
export function simulateQueue(perSecond: readonly number[], capacity: number): QueueResult {
  if (!(capacity > 0)) throw new Error("capacity must be > 0");
  let backlog = 0;
  let peakDelaySeconds = 0;
  for (const arrivals of perSecond) {
    // The last write of the second arrives at its end and waits behind everything before it.
    backlog = Math.max(0, backlog + arrivals - capacity);
    peakDelaySeconds = Math.max(peakDelaySeconds, arrivals > 0 ? backlog / capacity : 0);
  }
  return { peakLoad: Math.max(0, ...perSecond), peakDelaySeconds, backlogAtEnd: backlog };
}
