/**
 * The server asked the importer to slow down (503 or 429, with or without a
 * Retry-After), or could not be reached: the batch was not taken, or taken
 * only in part, and is sent again once `retryAfterMs` has passed.
 */
export class Backpressure extends Error {
  constructor(
    readonly retryAfterMs: number | null,
    message: string,
  ) {
    super(message);
  }
}

export type FlowOptions = {
  /** Most batches in flight at once. */
  maxInFlight: number;
  /**
   * How long the server may refuse every call before the run gives up (it is
   * down, not busy): default 10 minutes. A busy server's refusals (its queues
   * behind, a Retry-After) go on as long as its backlog takes to drain, so a
   * count of refusals would end a healthy run whose server merely fell behind.
   */
  giveUpAfterMs?: number;
  now?: () => number;
};

/**
 * How many batches an importer keeps in flight, and until when it holds
 * back, from what the server answers (additive increase, multiplicative
 * decrease, as TCP does): every acknowledged batch lets the window grow by
 * one batch per window's worth acknowledged, up to `maxInFlight`; every
 * refusal halves it (never below one) and holds every new send until the
 * server's Retry-After has passed, or a backoff doubling from 1 s up to 30 s
 * when it gave none. The import's speed is then what the server takes, not a
 * figure guessed in advance.
 */
export class FlowControl {
  #window = 1;
  #credit = 0;
  #holdUntil = 0;
  #refusalsInARow = 0;
  #refusedSince: number | null = null;
  readonly #max: number;
  readonly #giveUpAfterMs: number;
  readonly #now: () => number;

  constructor(options: FlowOptions) {
    this.#max = Math.max(1, Math.floor(options.maxInFlight));
    this.#giveUpAfterMs = options.giveUpAfterMs ?? 10 * 60_000;
    this.#now = options.now ?? Date.now;
  }

  get window(): number {
    return this.#window;
  }

  /** Milliseconds before a new batch may be sent (0: now). */
  get waitMs(): number {
    return Math.max(0, this.#holdUntil - this.#now());
  }

  acknowledged(): void {
    this.#refusalsInARow = 0;
    this.#refusedSince = null;
    if (this.#window >= this.#max) return;
    this.#credit++;
    if (this.#credit >= this.#window) {
      this.#credit = 0;
      this.#window++;
    }
  }

  /** Records a refusal; throws once the server has refused every call for too long to still be only busy. */
  refused(pressure: Backpressure): void {
    this.#refusalsInARow++;
    const now = this.#now();
    this.#refusedSince ??= now;
    if (now - this.#refusedSince > this.#giveUpAfterMs) {
      const seconds = Math.round((now - this.#refusedSince) / 1000);
      throw new Error(`the service refused every call for ${seconds} s (${this.#refusalsInARow} calls); last: ${pressure.message}`);
    }
    this.#window = Math.max(1, Math.floor(this.#window / 2));
    this.#credit = 0;
    const backoff = Math.min(30_000, 1_000 * 2 ** Math.min(5, this.#refusalsInARow - 1));
    this.#holdUntil = Math.max(this.#holdUntil, now + (pressure.retryAfterMs ?? backoff));
  }
}
