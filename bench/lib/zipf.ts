// Which items the simulated users touch: Zipf-distributed popularity, and one
// hot item that takes a fixed share of all writes (a viral post).

/** A small fast seeded generator (mulberry32), so a run can be repeated with --seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Samples ranks 0..n-1 with P(rank k) proportional to 1 / (k+1)^exponent. */
export class Zipf {
  readonly #cdf: Float64Array;

  constructor(n: number, exponent: number) {
    this.#cdf = new Float64Array(n);
    let total = 0;
    for (let k = 0; k < n; k++) this.#cdf[k] = total += 1 / Math.pow(k + 1, exponent);
    for (let k = 0; k < n; k++) this.#cdf[k]! /= total;
  }

  sample(random: () => number): number {
    const u = random();
    let lo = 0;
    let hi = this.#cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

export class ItemPicker {
  readonly #zipf: Zipf;

  /** `items[0]` is the hot item. */
  constructor(
    readonly items: readonly string[],
    readonly hotShare: number,
    exponent: number,
    readonly random: () => number,
  ) {
    this.#zipf = new Zipf(items.length, exponent);
  }

  get hot(): string {
    return this.items[0]!;
  }

  /** The hot item with probability hotShare, else a Zipf pick over all items. */
  forWrite(): string {
    return this.random() < this.hotShare ? this.hot : this.forRead();
  }

  forRead(): string {
    return this.items[this.#zipf.sample(this.random)]!;
  }

  /** Up to n distinct items, as a feed shows them: popular ones more often. */
  batch(n: number): string[] {
    const picked = new Set<string>();
    const want = Math.min(n, this.items.length);
    for (let tries = 0; picked.size < want && tries < want * 20; tries++) picked.add(this.forRead());
    while (picked.size < want) picked.add(this.items[Math.floor(this.random() * this.items.length)]!);
    return [...picked];
  }
}
