import { log } from "../../shared/log";

/** However often it is asked again, `Soon` runs its task at most this many delays after the first request. */
const MAX_DELAYS = 4;

/**
 * Runs `task` once the object has been quiet for `delayMs`: each request
 * restarts the wait, up to MAX_DELAYS delays after the first request since
 * the task last ran or was cancelled. A hot item's children use it to store
 * their heads' acknowledgements of their reports: folded into a
 * commit the object makes anyway when its next write comes within the delay
 * (a busy object pays nothing extra, however long it stays busy), committed
 * on their own otherwise, well before an idle object can be evicted with
 * them held in memory only. Never throws into the timer.
 *
 * A request only moves the time the task is due; the one timer is never
 * cleared. When it fires before that time it is set again for it, and after
 * a cancel it finds nothing due and stops. Clearing and setting a timer on
 * every like cost more CPU than one timer per delay (docs/benchmarks.md).
 */
export class Soon {
  /** When the task runs; null when nothing waits. */
  #due: number | null = null;
  #deadline = 0;
  /** Whether the timer is set. It never fires after `#due`: a request only moves `#due` later. */
  #timerSet = false;

  constructor(
    private readonly event: string,
    private readonly delayMs: number,
    private readonly task: () => void,
  ) {}

  request(): void {
    const now = Date.now();
    if (this.#due === null) this.#deadline = now + MAX_DELAYS * this.delayMs;
    this.#due = Math.min(now + this.delayMs, this.#deadline);
    if (!this.#timerSet) this.#setTimer(this.#due - now);
  }

  /** Another commit stored what the task would: nothing is waiting, and the next request starts a fresh wait. */
  cancel(): void {
    this.#due = null;
  }

  #setTimer(ms: number): void {
    this.#timerSet = true;
    setTimeout(() => this.#fire(), Math.max(0, ms));
  }

  #fire(): void {
    this.#timerSet = false;
    if (this.#due === null) return;
    const now = Date.now();
    if (now < this.#due) return this.#setTimer(this.#due - now);
    this.#due = null;
    try {
      this.task();
    } catch (error) {
      log("error", this.event, { error: String(error) });
    }
  }
}
