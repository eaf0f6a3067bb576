import type { WaitUntil } from "../../shared/wait-until";

/**
 * Work a request does for the requests after it, not for its own answer (a
 * refresh of the settings or counts this isolate keeps). The handler
 * collects it and begins it as it returns, in the runtime's next turn, by
 * when its answer is on its way (an error answer's middleware may still be
 * reading it). Begun earlier, beside the request's call to the
 * user's object, it runs in front of the answer wherever the Worker, the
 * objects and D1 share a thread, as they do under `wrangler dev` ("The
 * like's critical path" in docs/benchmarks.md). On Cloudflare the wait only
 * moves a round trip the answer never needed.
 */
export class AfterAnswer {
  readonly #tasks: (() => Promise<unknown>)[] = [];

  constructor(private readonly ctx: WaitUntil) {}

  /** Work to begin once the answer is out; a failure is the task's own to report. */
  add(task: () => Promise<unknown>): void {
    this.#tasks.push(task);
  }

  /** The handler's last step, whether it answers or throws: the tasks begin in the next turn. */
  start(): void {
    if (this.#tasks.length === 0) return;
    const tasks = this.#tasks.splice(0);
    this.ctx.waitUntil(
      new Promise((turn) => setTimeout(turn, 0)).then(() => Promise.all(tasks.map((task) => task().catch(() => undefined)))),
    );
  }
}

/** Runs a handler with its AfterAnswer, and begins what it collected as the handler returns or throws. */
export async function withAfterAnswer<T>(ctx: WaitUntil, handler: (after: AfterAnswer) => Promise<T>): Promise<T> {
  const after = new AfterAnswer(ctx);
  try {
    return await handler(after);
  } finally {
    after.start();
  }
}
