export type BreakerState = "closed" | "open" | "half_open";

export type BreakerOptions = {
  /** Failures in a row that open the breaker. */
  failures: number;
  /** How long it stays open before one probe may pass (half-open). */
  openMs: number;
  now?: () => number;
  /** Told of every change of state (for a metric and a log line). */
  onChange?: (state: BreakerState) => void;
};

/** Refused without calling: the dependency's breaker is open. Not retryable within this call. */
export class BreakerOpen extends Error {
  readonly retryable = false;
  constructor(readonly dependency: string) {
    super(`${dependency} is unavailable (circuit breaker open)`);
    this.name = "BreakerOpen";
  }
}

/**
 * A circuit breaker for one dependency (D1, the central store): after
 * `failures` failures in a row it opens and refuses calls at once, so a store
 * that is down costs neither its timeouts nor its load on every message;
 * after `openMs` one call is let through as a probe (half-open): its success
 * closes the breaker, its failure opens it for another `openMs`.
 * Per isolate: each isolate learns on its own, which is what keeps one
 * isolate's bad luck from cutting off a store for everybody.
 */
export class CircuitBreaker {
  #state: BreakerState = "closed";
  #failures = 0;
  #openedAt = 0;
  #probing = false;
  readonly #now: () => number;

  constructor(
    readonly dependency: string,
    private readonly options: BreakerOptions,
  ) {
    this.#now = options.now ?? Date.now;
  }

  get state(): BreakerState {
    if (this.#state === "open" && this.#now() - this.#openedAt >= this.options.openMs) this.#set("half_open");
    return this.#state;
  }

  async call<T>(work: () => Promise<T>): Promise<T> {
    const state = this.state;
    if (state === "open" || (state === "half_open" && this.#probing)) throw new BreakerOpen(this.dependency);
    const probe = state === "half_open";
    if (probe) this.#probing = true;
    try {
      const result = await work();
      this.#failures = 0;
      if (this.#state !== "closed") this.#set("closed");
      return result;
    } catch (error) {
      this.#failures++;
      if (probe || this.#failures >= this.options.failures) {
        this.#openedAt = this.#now();
        this.#set("open");
      }
      throw error;
    } finally {
      if (probe) this.#probing = false;
    }
  }

  #set(state: BreakerState): void {
    if (state === this.#state) return;
    this.#state = state;
    this.options.onChange?.(state);
  }
}
