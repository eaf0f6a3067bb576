import { DurableObject } from "cloudflare:workers";
import type { FlushBatch, AccumulatorRead, WindowRead } from "../metrics/protocol";
import { copySeries, mergeAll, mergeSeries, seriesKey, type Series, type SeriesMap } from "../metrics/series";
import { SqlSchema, type Migration } from "./lib/sql-schema";

const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    sql: `
      CREATE TABLE series (key TEXT PRIMARY KEY, body TEXT NOT NULL) WITHOUT ROWID;
      CREATE TABLE applied (
        source TEXT    NOT NULL,
        seq    INTEGER NOT NULL,
        at     INTEGER NOT NULL,
        PRIMARY KEY (source, seq)
      ) WITHOUT ROWID;
      CREATE INDEX applied_at ON applied (at);
    `,
  },
];

/** Recent activity is kept in slots of this length, in memory only: a restarted accumulator's windows start empty. */
const SLOT_MS = 5_000;
/** Dashboard rates: the current slot and the two before it, 10 to 15 seconds. */
const RECENT_SLOTS = 3;
/** Alerts: five minutes, as the Prometheus rules in docs/alerts.rules.yml use. */
const ALERT_SLOTS = 60;
/** A batch is recognised as already applied for this long; isolates resend within seconds, not hours. */
const APPLIED_KEEP_MS = 60 * 60_000;
const PRUNE_EVERY_MS = 60_000;

/**
 * One of the metrics accumulators: the sum of what the isolates hashed to it
 * have flushed. Totals are stored (one commit per flush, coalesced by the isolates
 * to at most one a second each); the recent windows are memory only.
 */
export class MetricsAccumulator extends DurableObject<Env> {
  readonly #schema: SqlSchema;
  #totals: SeriesMap = new Map();
  #slots = new Map<number, SeriesMap>();
  #prunedAt = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#schema = new SqlSchema(ctx.storage, MIGRATIONS);
    if (!this.#schema.ready) return;
    for (const row of ctx.storage.sql.exec<{ key: string; body: string }>("SELECT key, body FROM series")) {
      this.#totals.set(row.key, JSON.parse(row.body) as Series);
    }
  }

  /** Applies each batch not applied before; the series it changes and the batch ids are one transaction. */
  merge(batches: readonly FlushBatch[]): void {
    const now = Date.now();
    this.#schema.ensure();
    const sql = this.ctx.storage.sql;
    const changed: SeriesMap = new Map();
    const recent: SeriesMap = new Map();
    const prune = now - this.#prunedAt >= PRUNE_EVERY_MS;
    let expired: string[] = [];
    this.ctx.storage.transactionSync(() => {
      for (const batch of batches) {
        const seen = sql.exec("SELECT 1 FROM applied WHERE source = ? AND seq = ?", batch.source, batch.seq).toArray();
        if (seen.length > 0) continue;
        sql.exec("INSERT INTO applied (source, seq, at) VALUES (?, ?, ?)", batch.source, batch.seq, now);
        for (const series of batch.series) {
          const key = seriesKey(series.name, series.labels);
          const current = this.#totals.get(key);
          if (!changed.has(key) && current) changed.set(key, copySeries(current));
          mergeSeries(changed, series);
          if (series.kind !== "gauge") mergeSeries(recent, series);
        }
      }
      for (const [key, series] of changed) {
        sql.exec(
          "INSERT INTO series (key, body) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET body = excluded.body",
          key,
          JSON.stringify(series),
        );
      }
      if (prune) {
        sql.exec("DELETE FROM applied WHERE at < ?", now - APPLIED_KEEP_MS);
        expired = [...this.#totals].filter(([key, s]) => !changed.has(key) && isExpired(s, now)).map(([key]) => key);
        for (const key of expired) sql.exec("DELETE FROM series WHERE key = ?", key);
      }
    });
    for (const [key, series] of changed) this.#totals.set(key, series);
    if (prune) {
      this.#prunedAt = now;
      for (const key of expired) this.#totals.delete(key);
    }
    this.#addToSlot(Math.floor(now / SLOT_MS), recent);
  }

  /** Totals (gauges past their time-to-live left out) and the sums of the recent slots. Writes nothing. */
  read(): AccumulatorRead {
    const now = Date.now();
    const current = Math.floor(now / SLOT_MS);
    return {
      now,
      totals: [...this.#totals.values()].filter((s) => !isExpired(s, now)),
      recent: this.#window(current, RECENT_SLOTS),
      alert: this.#window(current, ALERT_SLOTS),
    };
  }

  #addToSlot(slot: number, delta: SeriesMap): void {
    if (delta.size === 0) return;
    const series = this.#slots.get(slot) ?? new Map();
    mergeAll(series, delta.values());
    this.#slots.set(slot, series);
    for (const old of this.#slots.keys()) if (old <= slot - ALERT_SLOTS) this.#slots.delete(old);
  }

  #window(current: number, slots: number): WindowRead {
    const first = current - slots + 1;
    const sum: SeriesMap = new Map();
    for (const [slot, series] of this.#slots) if (slot >= first) mergeAll(sum, series.values());
    return { since: first * SLOT_MS, series: [...sum.values()] };
  }
}

function isExpired(series: Series, now: number): boolean {
  return series.kind === "gauge" && series.expiresAt !== null && series.expiresAt <= now;
}
