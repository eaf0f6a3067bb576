/**
 * Single flight for one isolate's store reads: an item is read by one
 * request however many want it, and a read not yet sent takes in the items
 * of the requests that reach the store in the meantime.
 *
 * workerd cancels a request whose only pending work is a promise created by
 * another request ("the Worker's code had hung"), so requests share
 * outcomes, never promises: a waiting request polls a flight with its own
 * timers.
 */

/** One item's read by some request of this isolate: `result` is set once it answered, and only if it did. */
export type Flight<T> = { done: boolean; result?: T };

/** How often a request waiting on another's read looks at its outcome. */
const POLL_MS = 2;

export class Flights<T> {
  readonly #inflight = new Map<string, Flight<T>>();
  /** Reads not sent yet, by what may share one (a caller's own metrics and query path). */
  readonly #forming = new Map<string, Map<string, Flight<T>>>();

  /** `maxItems`: most items one read may ask for, whoever brought them. */
  constructor(private readonly maxItems: number) {}

  /** The read of the item another request has in flight, if any. */
  find(key: string): Flight<T> | undefined {
    return this.#inflight.get(key);
  }

  /** Makes this request the item's reader: other requests now wait on the flight instead of reading it. */
  claim(key: string): Flight<T> {
    const flight: Flight<T> = { done: false };
    this.#inflight.set(key, flight);
    return flight;
  }

  /** Ends flights: their results are final, and the next read of those items is a new one. */
  land(flights: ReadonlyMap<string, Flight<T>>, result: (key: string) => T | undefined): void {
    for (const [key, flight] of flights) {
      flight.result = result(key);
      flight.done = true;
      if (this.#inflight.get(key) === flight) this.#inflight.delete(key);
    }
  }

  /**
   * Hands claimed items to a read of the same `group` that is not sent yet,
   * when it has room for all of them: its reader answers for them, and this
   * request waits on their flights. False when there is no such read.
   */
  join(group: string, flights: ReadonlyMap<string, Flight<T>>): boolean {
    const forming = this.#forming.get(group);
    if (!forming || forming.size + flights.size > this.maxItems) return false;
    for (const [key, flight] of flights) forming.set(key, flight);
    return true;
  }

  /**
   * Opens a read of claimed items that others may join until the next turn
   * of the event loop, and answers every item it then holds. Requests that
   * reach the store in that turn (their own edge lookups answered at the
   * same time, say) add their items rather than make a query each; waiting
   * longer would add that wait to every miss.
   */
  async gather(group: string, flights: ReadonlyMap<string, Flight<T>>): Promise<Map<string, Flight<T>>> {
    const forming = new Map(flights);
    this.#forming.set(group, forming);
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (this.#forming.get(group) === forming) this.#forming.delete(group);
    return forming;
  }
}

/**
 * Waits until every one of the flights answered (or `waitMs` passed), polled
 * with this request's own timer: one timer for all of them, not one per
 * item, since a feed can wait on dozens of items at once. A flight not done
 * by then may have no result.
 */
export async function waitForFlights<T>(flights: Iterable<Flight<T>>, waitMs: number): Promise<void> {
  const deadline = Date.now() + waitMs;
  let pending = [...flights].filter((flight) => !flight.done);
  while (pending.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    pending = pending.filter((flight) => !flight.done);
  }
}
