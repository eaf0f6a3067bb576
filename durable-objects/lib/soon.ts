import { log } from "../../shared/log";

/** However often it is asked again, `Soon` runs its task at most this many delays after the first request. */
const MAX_DELAYS = 4;

/**
 * Runs `task` once the object has been quiet for `delayMs`: each request
 * restarts the wait, up to MAX_DELAYS delays after the first request since
 * the task last ran or was cancelled. Objects use it to store acknowledgements: folded into a
 * commit the object makes anyway when its next write comes within the delay
 * (a busy object pays nothing extra, however long it stays busy), committed
 * on their own otherwise, well before an idle object can be evicted with
 * them held in memory only. Never throws into the timer.
 */
export class Soon {
  #timer: ReturnType<typeof setTimeout> | undefined;
  #deadline = 0;

  constructor(
    private readonly event: string,
    private readonly delayMs: number,
    private readonly task: () => void,
  ) {}

  request(): void {
    const now = Date.now();
    if (this.#timer === undefined) this.#deadline = now + MAX_DELAYS * this.delayMs;
    else clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#run(), Math.max(0, Math.min(this.delayMs, this.#deadline - now)));
  }

  /** Another commit stored what the task would: nothing is waiting, and the next request starts a fresh wait. */
  cancel(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #run(): void {
    this.#timer = undefined;
    try {
      this.task();
    } catch (error) {
      log("error", this.event, { error: String(error) });
    }
  }
}
