import type { EdgeRow } from "./emission-outbox";

/** One emission sent: the snapshot and edge versions its acknowledgement takes out of the outbox, and when it was sent. */
export type Flight = { snapshotSeq: number | null; edges: EdgeRow[]; at: number };

/**
 * The emissions an object sent and has not heard back about, by emission id,
 * held for their acknowledgements. Bounded by age and by count (the oldest
 * goes first): while the aggregator is down a busy object keeps sending and
 * resending, and an acknowledgement that finds nothing here only costs a
 * resend, which the aggregator's conditional writes make harmless.
 */
export class InFlight {
  readonly #flights = new Map<string, Flight>();

  constructor(
    readonly maxEntries: number,
    private readonly maxAgeMs: number,
  ) {}

  get size(): number {
    return this.#flights.size;
  }

  add(id: string, flight: Flight): void {
    this.#flights.set(id, flight);
    for (const oldest of this.#flights.keys()) {
      if (this.#flights.size <= this.maxEntries) break;
      this.#flights.delete(oldest);
    }
  }

  /** The emission's flight, forgotten here: an acknowledgement counts once. */
  take(id: string): Flight | undefined {
    const flight = this.#flights.get(id);
    this.#flights.delete(id);
    return flight;
  }

  /** Forgets what was sent more than the maximum age ago: flights are kept in the order they were sent, so the walk stops at the first young one. */
  expire(now: number): void {
    for (const [id, flight] of this.#flights) {
      if (flight.at + this.maxAgeMs >= now) break;
      this.#flights.delete(id);
    }
  }
}
