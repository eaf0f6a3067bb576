import { config } from "../../shared/config";

/** Entries kept per isolate, per kind; the oldest go first. */
const MAX_ENTRIES = 100_000;

/**
 * What this isolate already wrote to both stores: the newest snapshot
 * sequence per item and the newest version per edge. A resent emission (its
 * ack was late, or lost) is then acknowledged without writing again. Safe
 * because the stores only move forward: once a version is stored, anything
 * not newer would be refused anyway. Kept per central-store configuration.
 */
export class WrittenCache {
  readonly #entries = new Map<string, number>();

  covers(key: string, version: number): boolean {
    const known = this.#entries.get(key);
    return known !== undefined && version <= known;
  }

  remember(key: string, version: number): void {
    const known = this.#entries.get(key);
    if (known !== undefined && known >= version) return;
    this.#entries.delete(key);
    this.#entries.set(key, version);
    if (this.#entries.size > MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
  }
}

const caches = new Map<string, WrittenCache>();

/** The cache for one central-store configuration (endpoint and table prefix); none while the central store is off. */
export function writtenCache(env: Env): WrittenCache | null {
  const { ALTERNATOR_ENDPOINT: endpoint, ALTERNATOR_TABLE_PREFIX: prefix } = config(env);
  if (!endpoint) return null;
  const key = `${endpoint}|${prefix}`;
  let cache = caches.get(key);
  if (!cache) caches.set(key, (cache = new WrittenCache()));
  return cache;
}
