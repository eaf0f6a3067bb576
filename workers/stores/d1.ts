import { config } from "../../shared/config";
import { meterD1, type QueryPath } from "../../metrics/d1-usage";
import { guarded } from "./breakers";

export type { QueryPath };

/** A database's binding name (`DB`, `DB_1`, ...), found once per binding object. */
const names = new WeakMap<D1Database, string>();

function bindingName(env: Env, db: D1Database): string {
  let name = names.get(db);
  if (name === undefined) {
    name = Object.entries(env).find(([, value]) => value === db)?.[0] ?? "unknown";
    names.set(db, name);
  }
  return name;
}

/**
 * Every D1 call of the Worker goes through here (a live hub's registry
 * writes, durable-objects/lib/live-registry.ts, are metered the same way), so that:
 * - its cost is counted from D1's own result meta (statements run, rows read
 *   and written: what D1 bills), by the route or job that made it and by database;
 * - each database's size, from the meta's `size_after`, is watched against D1's limit;
 * - each call has a deadline and sits behind its database's circuit breaker;
 *   with D1_TIMEOUT_MS it is retried when retryable; a caller that gives its
 *   own (shorter) deadline has a latency budget, serves what it last knew
 *   instead, and is not retried.
 * Every statement plaudit runs is safe to repeat (upserts, conditional or
 * keyed writes, reads), which is what makes a retry after a deadline sound.
 * A query a write's answer waits for is counted with `path="critical"`
 * (QueryPath): the round trips a user waits on, which the write path keeps rare.
 */
export function d1(env: Env, db: D1Database, caller: string, timeoutMs?: number, path?: QueryPath) {
  const database = bindingName(env, db);
  const deadline = Math.min(timeoutMs ?? Infinity, config(env).D1_TIMEOUT_MS);
  const call = <T>(work: () => Promise<T>) => guarded(env, { dependency: `d1:${database}`, endpoint: database }, deadline, work, timeoutMs === undefined ? 3 : 1);
  const meter = (metas: readonly D1Meta[], batch = false) => meterD1(metas, { caller, database, path, batch });
  return {
    /** One statement's rows. */
    async all<T>(statement: D1PreparedStatement): Promise<T[]> {
      const result = await call(() => statement.all<T>());
      meter([result.meta]);
      return result.results;
    },
    /** One statement's first row, or null. */
    async first<T>(statement: D1PreparedStatement): Promise<T | null> {
      return (await this.all<T>(statement))[0] ?? null;
    },
    /** One statement run for its effect. */
    async run(statement: D1PreparedStatement): Promise<void> {
      const result = await call(() => statement.run());
      meter([result.meta]);
    },
    /** Several statements in one transaction (`batch()`): each counts as a query. */
    async batch(statements: D1PreparedStatement[]): Promise<D1Result[]> {
      if (statements.length === 0) return [];
      const results = await call(() => db.batch(statements));
      meter(results.map((result) => result.meta), true);
      return results;
    },
  };
}
