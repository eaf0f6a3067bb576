import { metrics } from "./recorder";

/** "critical": a query made before a write's answer (a like, save, view or share), which the answer waits for. */
export type QueryPath = "critical";

/**
 * Counts what D1 bills for one call, from the meta of each statement's
 * result: the statements run, the rows read and written, and the
 * database's size after it; a batch() counts once more, as one transaction.
 * `path="critical"` marks a query a write's answer waited for.
 */
export function meterD1(
  metas: readonly D1Meta[],
  { caller, database, path, batch }: { caller: string; database: string; path?: QueryPath; batch?: boolean },
): void {
  if (batch) metrics.count("d1_batches_total", { caller, database });
  metrics.count("d1_queries_total", path ? { caller, database, path } : { caller, database }, metas.length);
  metrics.count("d1_rows_read_total", { caller }, metas.reduce((sum, meta) => sum + (meta.rows_read ?? 0), 0));
  metrics.count("d1_rows_written_total", { caller }, metas.reduce((sum, meta) => sum + (meta.rows_written ?? 0), 0));
  const size = metas.findLast((meta) => typeof meta.size_after === "number")?.size_after;
  if (size !== undefined) metrics.gauge("d1_database_bytes", { database }, size);
}
