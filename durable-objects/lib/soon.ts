import { log } from "../../shared/log";

/**
 * Runs `task` once, `delayMs` after the first request since it last ran.
 * Objects use it to store acknowledgements: folded into a commit the object
 * makes anyway when one comes within the delay (a busy object pays nothing
 * extra), committed on their own otherwise, well before an idle object can be
 * evicted with them held in memory only. Never throws into the timer.
 */
export class Soon {
  #scheduled = false;

  constructor(
    private readonly event: string,
    private readonly delayMs: number,
    private readonly task: () => void,
  ) {}

  request(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setTimeout(() => {
      this.#scheduled = false;
      try {
        this.task();
      } catch (error) {
        log("error", this.event, { error: String(error) });
      }
    }, this.delayMs);
  }
}
