/**
 * Coalesces calls into one storage commit: the first call opens a window of
 * `windowMs` (0: until the next turn of the event loop), and one `run`
 * handles everything that arrived within it in a single transaction. A
 * commit, not the work inside it, is what limits an object's write rate
 * (about 6 ms each locally) and what the platform bills by the row, so a busy
 * object commits at most about 1000 / windowMs times a second whatever its
 * write rate. Callers are answered only after that commit: an
 * acknowledgement never runs ahead of what is durable.
 */
export class CommitBatcher<In, Out> {
  #pending: { input: In; resolve: (out: Out) => void; reject: (error: unknown) => void }[] = [];
  #scheduled = false;

  constructor(
    private readonly run: (inputs: readonly In[]) => Out[],
    private readonly windowMs: () => number = () => 0,
  ) {}

  submit(input: In): Promise<Out> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ input, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setTimeout(() => this.#flush(), this.windowMs());
      }
    });
  }

  #flush(): void {
    const batch = this.#pending;
    this.#pending = [];
    this.#scheduled = false;
    try {
      const outputs = this.run(batch.map((b) => b.input));
      batch.forEach((b, i) => b.resolve(outputs[i]!));
    } catch (error) {
      for (const b of batch) b.reject(error);
    }
  }
}
