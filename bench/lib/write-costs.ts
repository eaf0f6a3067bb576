// What a run cost, from /metrics deltas: per like (a like or unlike that
// changed the user's state), the storage commits, rows written and alarms set
// by the objects, object calls, queue messages, D1 rows and central-store
// writes; a wait for the tail of a load to end (between the rounds of
// `--reference`); and, after the load, an idle watch that expects none of them.
import type { HttpClient } from "./http";
import { ACK_SWEEP_MS, OUTBOX_SWEEP_MS } from "../../shared/object-windows";

type Samples = Map<string, number>;

/** A server past its saturation may leave a read unanswered while it drains an open-loop backlog: tried this many times. */
const SCRAPE_ATTEMPTS = 3;

/** Every sample of /metrics, keyed `name{labels}` as exposed. */
export async function scrapeMetrics(http: HttpClient, serviceToken: string): Promise<Samples> {
  let res = await http.request("GET", "/metrics", { token: serviceToken });
  for (let attempt = 1; attempt < SCRAPE_ATTEMPTS && res.status === 0; attempt++) res = await http.request("GET", "/metrics", { token: serviceToken });
  if (res.status !== 200 || typeof res.body !== "string") throw new Error(`GET /metrics answered ${res.status}`);
  const samples: Samples = new Map();
  for (const line of res.body.split("\n")) {
    const match = line.match(/^([a-z_:][a-z0-9_:]*)(\{[^}]*\})?\s+(\S+)$/i);
    if (match) samples.set(`${match[1]}${match[2] ?? ""}`, Number(match[3]));
  }
  return samples;
}

/**
 * Objects flush their metrics about once a second: scrapes until two reads a
 * second apart agree (at most `limitMs`), so a delta includes the run's tail.
 */
export async function settledMetrics(http: HttpClient, serviceToken: string, limitMs = 15_000): Promise<Samples> {
  const deadline = Date.now() + limitMs;
  let last = await scrapeMetrics(http, serviceToken);
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const next = await scrapeMetrics(http, serviceToken);
    if (same(last, next)) return next;
    last = next;
  }
  return last;
}

/** The counters of the work a load leaves running: deliveries and emissions (commits, alarms) and the queue consumer. */
const BACKGROUND = ["plaudit_storage_commits_total", "plaudit_storage_alarms_run_total", "plaudit_queue_messages_total"];
/**
 * Objects flush their metrics within a second, and the pipeline's steps are
 * up to about 1.5 s apart (deliveries, emissions and the consumer); the
 * sweeps come later, and are waited for by the clock (untilSwept).
 */
const QUIET_MS = 3_000;
/**
 * A poll is a /metrics request, whose CPU falls in the phase's CPU figure
 * (the settling is in it): a third of QUIET_MS apart, so stillness is seen
 * by at least three reads while the polls cost as little as they can.
 */
const QUIET_POLL_MS = 1_000;

/**
 * An item's sweep counts from its apply, up to a commit window after the
 * like; an alarm may run a little after its time; its object flushes its
 * metrics within a second.
 */
const SWEEP_GRACE_MS = 2_000;

/**
 * Waits until the sweep alarms set by writes up to `lastWriteAt` have come
 * due (shared/object-windows.ts): each stores its burst's delivered marks
 * (a user's) or acknowledgements (an item's) in a commit of its own, part of
 * what those likes cost and work an idle system is not yet done with. A
 * settling read after it sees them run.
 */
export async function untilSwept(lastWriteAt: number): Promise<void> {
  const wait = lastWriteAt + Math.max(OUTBOX_SWEEP_MS, ACK_SWEEP_MS) + SWEEP_GRACE_MS - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

/**
 * Polls /metrics until the sweeps of writes up to `lastWriteAt` are due and
 * the background counters have stood still for QUIET_MS (at most
 * `limitMs`), so whatever runs next does not share the machine with the
 * tail of plaudit's last load.
 */
export async function awaitQuiet(http: HttpClient, serviceToken: string, limitMs: number, lastWriteAt: number): Promise<{ quiet: boolean; ms: number }> {
  const started = Date.now();
  await untilSwept(lastWriteAt);
  // The limit bounds the wait for stillness, not the sweeps' known delay.
  const limitFrom = Date.now();
  let last = await scrapeMetrics(http, serviceToken);
  let stillSince = Date.now();
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, QUIET_POLL_MS));
    const next = await scrapeMetrics(http, serviceToken);
    const now = Date.now();
    if (BACKGROUND.some((name) => delta(last, next, name) !== 0)) stillSince = now;
    last = next;
    if (now - stillSince >= QUIET_MS) return { quiet: true, ms: now - started };
    if (now - limitFrom >= limitMs) return { quiet: false, ms: now - started };
  }
}

/** The sum of the samples of `name` whose labels include every `labels` pair, after minus before. */
export function delta(before: Samples, after: Samples, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  let sum = 0;
  for (const [key, value] of after) {
    if (key !== name && !key.startsWith(`${name}{`)) continue;
    if (!wanted.every((pair) => key.includes(pair))) continue;
    sum += value - (before.get(key) ?? 0);
  }
  return sum;
}

const OBJECTS = ["user_likes", "item_counter", "item_shard"] as const;

export type Costs = {
  /** Likes and unlikes that changed a user's state: the denominator of every "per like". */
  likes: number;
  perLike: {
    commits: number;
    rowsWritten: number;
    alarmsSet: number;
    /**
     * Not billed; a deletion in a sweep's turn rides the sweep's commit, one
     * left to the runtime is a commit of its own. Absent from reports of runs
     * before it was counted.
     */
    alarmsDeleted?: number;
    /** Rows written and alarms set together: what the platform bills as rows. */
    billedRows: number;
    objectCalls: number;
    queueMessages: number;
    /** D1 statements the aggregator ran for the likes' snapshots (each one billed row or more). */
    d1Queries: number;
    /** D1 batch() calls: each one transaction (one commit) and one round trip. Absent from reports of runs before they were counted. */
    d1Batches?: number;
    d1RowsWritten: number;
    centralStoreWrites: number;
  };
  /** Commits, rows written, alarms set and deleted per like, by object kind. */
  byObject: Record<string, { commits: number; rowsWritten: number; alarmsSet: number; alarmsDeleted?: number }>;
};

/** `changes`: the denominator when the changes did not come through the like route (an import's applied edges). */
export function costsBetween(before: Samples, after: Samples, changes?: number): Costs {
  const likes =
    changes ??
    delta(before, after, "plaudit_toggle_outcomes_total", { outcome: "liked" }) +
      delta(before, after, "plaudit_toggle_outcomes_total", { outcome: "unliked" });
  const per = (n: number) => (likes === 0 ? 0 : Math.round((n / likes) * 100) / 100);
  const byObject: Costs["byObject"] = {};
  for (const object of OBJECTS) {
    byObject[object] = {
      commits: per(delta(before, after, "plaudit_storage_commits_total", { object })),
      rowsWritten: per(delta(before, after, "plaudit_storage_rows_written_total", { object })),
      alarmsSet: per(delta(before, after, "plaudit_storage_alarms_set_total", { object })),
      alarmsDeleted: per(delta(before, after, "plaudit_storage_alarms_deleted_total", { object })),
    };
  }
  const rowsWritten = delta(before, after, "plaudit_storage_rows_written_total");
  const alarmsSet = delta(before, after, "plaudit_storage_alarms_set_total");
  return {
    likes,
    perLike: {
      commits: per(delta(before, after, "plaudit_storage_commits_total")),
      rowsWritten: per(rowsWritten),
      alarmsSet: per(alarmsSet),
      alarmsDeleted: per(delta(before, after, "plaudit_storage_alarms_deleted_total")),
      billedRows: per(rowsWritten + alarmsSet),
      objectCalls: per(delta(before, after, "plaudit_object_calls_total")),
      queueMessages: per(delta(before, after, "plaudit_queue_messages_total", { event: "sent" })),
      d1Queries: per(delta(before, after, "plaudit_d1_queries_total")),
      d1Batches: per(delta(before, after, "plaudit_d1_batches_total")),
      d1RowsWritten: per(delta(before, after, "plaudit_d1_rows_written_total")),
      centralStoreWrites: per(delta(before, after, "plaudit_central_store_writes_total")),
    },
    byObject,
  };
}

export type IdleWatch = { seconds: number; queueMessages: number; alarmsSet: number; alarmsRun: number; commits: number; objectCalls: number };

/** Watches an idle system for `seconds`: anything it sends, sets or commits is work an idle system should not do. */
export async function watchIdle(http: HttpClient, serviceToken: string, seconds: number): Promise<IdleWatch> {
  const before = await settledMetrics(http, serviceToken);
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const after = await settledMetrics(http, serviceToken);
  return {
    seconds,
    queueMessages: delta(before, after, "plaudit_queue_messages_total", { event: "sent" }),
    alarmsSet: delta(before, after, "plaudit_storage_alarms_set_total"),
    alarmsRun: delta(before, after, "plaudit_storage_alarms_run_total"),
    commits: delta(before, after, "plaudit_storage_commits_total"),
    objectCalls: delta(before, after, "plaudit_object_calls_total"),
  };
}

/**
 * The write path's targets per like that changed an edge, and for the D1
 * queries a like's answer waits for, per 100 like requests
 * (docs/benchmarks.md, "What a like costs" and "The like's critical path").
 */
export const WRITE_GOALS = { billedRows: 6, commits: 1.6, criticalPer100: 1 };

/** Rows billed per like, objects and D1 together: rows written, alarms set and D1 rows written. */
export function billedWithD1(costs: Costs): number {
  return Math.round((costs.perLike.billedRows + costs.perLike.d1RowsWritten) * 100) / 100;
}

/** `goals`: the run is a like load, so its figures are set against WRITE_GOALS. */
export function costsTable(costs: Costs, idle: IdleWatch | null, goals = false): string {
  const p = costs.perLike;
  const lines = [
    `per like (${costs.likes} likes and unlikes that changed state): ${p.commits} commits, ${p.rowsWritten} rows written + ` +
      `${p.alarmsSet} alarms set = ${p.billedRows} billed rows${p.alarmsDeleted === undefined ? "" : ` (${p.alarmsDeleted} alarms deleted, not billed)`}; ${p.objectCalls} object calls, ${p.queueMessages} queue messages, ` +
      `${p.d1RowsWritten} D1 rows (${billedWithD1(costs)} billed rows, objects and D1 together)${p.d1Batches === undefined ? "" : ` in ${p.d1Batches} D1 batches`}, ` +
      `${p.centralStoreWrites} central-store writes`,
    ...Object.entries(costs.byObject).map(
      ([object, c]) =>
        `  ${object}: ${c.commits} commits, ${c.rowsWritten} rows written, ${c.alarmsSet} alarms set${c.alarmsDeleted === undefined ? "" : `, ${c.alarmsDeleted} deleted`} per like`,
    ),
  ];
  if (goals) {
    const mark = (value: number, goal: number) => `${value} (goal <= ${goal}: ${value <= goal ? "met" : "not met"})`;
    lines.push(
      `  rows and commits per like that changed an edge: billed rows, objects and D1 together, ${mark(billedWithD1(costs), WRITE_GOALS.billedRows)}; ` +
        `commits ${mark(p.commits, WRITE_GOALS.commits)}`,
    );
  }
  if (idle) {
    lines.push(
      `idle for ${idle.seconds} s after the load: ${idle.queueMessages} queue messages, ${idle.alarmsSet} alarms set, ${idle.alarmsRun} alarms run, ` +
        `${idle.commits} commits, ${idle.objectCalls} object calls`,
    );
  }
  return lines.join("\n");
}

function same(a: Samples, b: Samples): boolean {
  if (a.size !== b.size) return false;
  for (const [key, value] of a) if (b.get(key) !== value) return false;
  return true;
}
