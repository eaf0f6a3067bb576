/**
 * Coalesces calls that arrive together into one storage commit: each call
 * waits for the next turn of the event loop, then one `run` handles them all
 * in a single transaction. A commit, not the work inside it, is what limits
 * an object's write rate (about 6 ms each locally).
 */
export class CommitBatcher<In, Out> {
  #pending: { input: In; resolve: (out: Out) => void; reject: (error: unknown) => void }[] = [];
  #scheduled = false;

  constructor(private readonly run: (inputs: readonly In[]) => Out[]) {}

  submit(input: In): Promise<Out> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ input, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setTimeout(() => this.#flush(), 0);
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
