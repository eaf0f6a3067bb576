import { metrics } from "../../metrics/recorder";

/**
 * Every D1 call plaudit makes goes through here, so its cost is counted from
 * D1's own result meta: statements run, rows read and rows written (what D1
 * bills), labelled with the route or job that made the call.
 */
function meter(caller: string, metas: readonly D1Meta[]): void {
  metrics.count("d1_queries_total", { caller }, metas.length);
  metrics.count("d1_rows_read_total", { caller }, metas.reduce((sum, meta) => sum + (meta.rows_read ?? 0), 0));
  metrics.count("d1_rows_written_total", { caller }, metas.reduce((sum, meta) => sum + (meta.rows_written ?? 0), 0));
}

/** One statement's rows. */
export async function queryAll<T>(caller: string, statement: D1PreparedStatement): Promise<T[]> {
  const result = await statement.all<T>();
  meter(caller, [result.meta]);
  return result.results;
}

/** One statement run for its effect. */
export async function execute(caller: string, statement: D1PreparedStatement): Promise<void> {
  const result = await statement.run();
  meter(caller, [result.meta]);
}

/** Several statements in one transaction (`batch()`): each counts as a query. */
export async function executeBatch(caller: string, db: D1Database, statements: D1PreparedStatement[]): Promise<D1Result[]> {
  if (statements.length === 0) return [];
  const results = await db.batch(statements);
  meter(caller, results.map((result) => result.meta));
  return results;
}
