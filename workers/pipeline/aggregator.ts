import { log } from "../../shared/log";
import { scheduleFlush } from "../../metrics/flush";
import { metrics } from "../../metrics/recorder";
import type { CentralStore } from "../stores/central-store";
import { centralStore } from "../stores/central-tables";
import { d1 } from "../stores/d1";
import { snapshotWrites } from "../stores/item-counts";
import { historyWrites } from "../stores/item-history";
import { publishLive } from "./live-publish";
import { countDatabaseFor, indexDatabaseFor, userIndexDatabaseFor } from "../stores/count-databases";
import { countDatabaseAt, countLayout } from "../stores/count-layout";
import { writeIndexes, type CountLayout } from "../../shared/count-layout";
import { Emission, edgeVersion, type CountSnapshot } from "../../shared/emissions";
import { originStub } from "./origins";
import { planBatch, type Planned } from "./plan";
import { settleAll } from "../../shared/settle";
import { writtenCache } from "./written-cache";

/** Central-store writes in flight at once, per batch. */
const CENTRAL_CONCURRENCY = 16;

/**
 * The regional aggregator: the `plaudit-events` consumer. Per batch it keeps
 * the newest snapshot per item and the newest version per edge, writes each
 * D1 database's share (counts, index rows, history) in one batch and the
 * central store with conditional writes, acknowledges each
 * emission back to its object (one call per object), then acks the queue
 * messages whose writes all succeeded and retries the rest. A message that
 * cannot be parsed is retried alone (and dead-lettered after max_retries):
 * it never holds back the rest of its batch.
 */
export async function aggregate(batch: MessageBatch<unknown>, env: Env, ctx?: ExecutionContext): Promise<void> {
  const started = Date.now();
  const parsed: { index: number; emission: Emission }[] = [];
  const failed = new Set<number>();
  batch.messages.forEach((message, index) => {
    const result = Emission.safeParse(message.body);
    if (result.success) parsed.push({ index, emission: result.data });
    else {
      failed.add(index);
      const issue = result.error.issues[0];
      const body = message.body as { origin?: unknown; item?: unknown } | null;
      // What was refused and where it came from, so the producer's bug can be found.
      log("error", "emission_rejected", {
        id: message.id,
        error: issue ? `${issue.path.join(".")}: ${issue.message}` : "not an emission",
        origin: body?.origin,
        item: typeof body?.item === "string" ? body.item.slice(0, 100) : body?.item,
      });
    }
  });

  const plan = planBatch(parsed);
  const cache = writtenCache(env);
  const unwritten = <T>(entries: Map<string, Planned<T>>, kind: string, version: (value: T) => number) =>
    [...entries]
      .map(([key, planned]) => ({ key, cacheKey: `${kind}\u0000${key}`, version: version(planned.value), planned }))
      .filter(({ cacheKey, version }) => !cache?.covers(cacheKey, version));
  const snapshots = unwritten(plan.snapshots, "s", (snapshot) => snapshot.seq);
  const edges = unwritten(plan.edges, "e", ({ edge }) => edgeVersion(edge[3], edge[4]));
  const failedWrites = new Set<Planned<unknown>>();
  const fail = (planned: Planned<unknown>, error: unknown, store: string) => {
    failedWrites.add(planned);
    for (const index of planned.messages) failed.add(index);
    log("error", "store_write_failed", { store, error: String(error) });
  };

  // Each item's counts go to its database in the count layout (both of them
  // while a reshard moves it), its history to its database by COUNT_DATABASES,
  // its index row to the next one, the index rows of users this isolate has
  // not indexed yet to theirs, all databases in parallel; a database that
  // fails retries only the messages of the items it counts or indexes and of
  // the users it indexes.
  const newest = new Map<string, CountSnapshot>();
  type Share = { counted: typeof snapshots; history: typeof snapshots; indexed: typeof snapshots; users: Map<string, Planned<unknown>[]> };
  const shares = new Map<D1Database, Share>();
  const share = (db: D1Database) => shares.get(db) ?? shares.set(db, { counted: [], history: [], indexed: [], users: new Map() }).get(db)!;
  let layout: CountLayout | null = null;
  if (snapshots.length > 0) {
    try {
      layout = await countLayout(env);
    } catch (error) {
      for (const { planned } of snapshots) fail(planned, error, "d1");
    }
  }
  for (const entry of layout ? snapshots : []) {
    for (const index of writeIndexes(layout!, entry.key)) share(countDatabaseAt(env, index)).counted.push(entry);
    share(countDatabaseFor(env, entry.key)).history.push(entry);
    share(indexDatabaseFor(env, entry.key)).indexed.push(entry);
  }
  for (const { planned } of edges) {
    const user = planned.value.edge[0];
    if (cache?.covers(userIndexKey(user), 1)) continue;
    const users = share(userIndexDatabaseFor(env, user)).users;
    users.set(user, [...(users.get(user) ?? []), planned]);
  }
  const values = (entries: typeof snapshots) => new Map(entries.map(({ key: item, planned }) => [item, planned.value]));
  await Promise.all(
    [...shares].map(async ([db, { counted, history, indexed, users }]) => {
      try {
        // The counts, the index rows and the history in one batch: one transaction, so one commit, per database.
        const counts = snapshotWrites(db, values(counted), { items: indexed.map(({ key }) => key), users: [...users.keys()] });
        const days = historyWrites(db, values(history));
        const results = await d1(env, db, "aggregator").batch([...counts, ...days.statements]);
        for (const user of users.keys()) cache?.remember(userIndexKey(user), 1);
        for (const [item, snapshot] of days.newest(results.slice(counts.length))) newest.set(item, snapshot);
      } catch (error) {
        for (const planned of [...[...counted, ...history, ...indexed].map((entry) => entry.planned), ...[...users.values()].flat()]) fail(planned, error, "d1");
      }
    }),
  );

  const writes = [
    ...snapshots.map(({ key: item, planned }) => ({ planned, write: (s: CentralStore) => s.writeSnapshot(item, planned.value) })),
    ...edges.map(({ planned }) => ({ planned, write: (s: CentralStore) => s.writeEdge(planned.value.item, planned.value.edge) })),
  ];
  if (writes.length > 0) {
    try {
      const store = await centralStore(env);
      if (store) {
        const results = await settleAll(writes, CENTRAL_CONCURRENCY, ({ write }) => write(store));
        results.forEach((result, i) => {
          if (result.status === "rejected") fail(writes[i]!.planned, result.reason, "central");
        });
      }
    } catch (error) {
      for (const { planned } of writes) fail(planned, error, "central");
    }
  }

  for (const { cacheKey, version, planned } of [...snapshots, ...edges]) if (!failedWrites.has(planned)) cache?.remember(cacheKey, version);

  await publishLive(env, newest);
  await acknowledge(env, parsed.filter(({ index }) => !failed.has(index)).map(({ emission }) => emission));
  batch.messages.forEach((message, index) => (failed.has(index) ? message.retry() : message.ack()));
  metrics.count("queue_messages_total", { queue: batch.queue, event: "consumed" }, batch.messages.length - failed.size);
  metrics.count("queue_messages_total", { queue: batch.queue, event: "retried" }, failed.size);
  const oldest = Math.min(...batch.messages.map((m) => m.timestamp.getTime()));
  metrics.gauge("aggregator_lag_seconds", { queue: batch.queue }, Math.max(0, started - oldest) / 1000);
  if (ctx) scheduleFlush(env, ctx);
  log("info", "aggregated", {
    messages: batch.messages.length,
    retried: failed.size,
    snapshots: snapshots.length,
    edges: edges.length,
    alreadyWritten: plan.snapshots.size + plan.edges.size - snapshots.length - edges.length,
    ms: Date.now() - started,
  });
}

/** The written-cache entry that says a user's index row is stored. */
const userIndexKey = (user: string) => `u\u0000${user}`;

/**
 * Tells each object which of its emissions are now in both stores: one call
 * per object. A lost ack costs only a resend, which the stores ignore.
 */
async function acknowledge(env: Env, written: readonly Emission[]): Promise<void> {
  const byOrigin = Map.groupBy(written, ({ origin }) => `${origin.ns}\u0000${origin.name}`);
  await Promise.all(
    [...byOrigin.values()].map(async (emissions) => {
      const origin = emissions[0]!.origin;
      try {
        await originStub(env, origin)?.ackEmissions(emissions.map(({ emission }) => emission));
      } catch (error) {
        log("error", "emission_ack_failed", { origin, error: String(error) });
      }
    }),
  );
}
