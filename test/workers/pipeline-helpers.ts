import { createExecutionContext, createMessageBatch, getQueueResult, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, vi } from "vitest";
import { zeroCounts, type Counts } from "../../shared/counters";
import { config } from "../../shared/config";
import { USER_DELIVERY_DELAY_MS } from "../../shared/own-writes";
import worker from "../../workers/index";
import { centralStore } from "../../workers/stores/central-tables";
import type { CentralStore } from "../../workers/stores/central-store";
import { countDatabaseFor } from "../../workers/stores/count-databases";
import { readD1Rows } from "../../workers/stores/item-counts";
import { splitItem } from "../../workers/stores/item-key";
import type { Emission, EmittedEdge } from "../../shared/emissions";

export const itemStub = (key: string) => env.ITEM_COUNTER.get(env.ITEM_COUNTER.idFromName(key));

let nextEmission = 0;

/** A head's emission for `item`, as its object would send it. */
export function headEmission(item: string, options: { seq?: number; counts?: Partial<Counts>; edges?: EmittedEdge[] } = {}): Emission {
  return {
    v: 1,
    origin: { ns: "ITEM_COUNTER", name: item },
    emission: `test.${++nextEmission}`,
    item,
    ...(options.seq === undefined ? {} : { snapshot: { seq: options.seq, counts: { ...zeroCounts(), ...options.counts } } }),
    edges: options.edges ?? [],
  };
}

/** Hands a batch to the Worker's queue consumer and returns which messages it acked and retried. */
export async function deliver(bodies: readonly unknown[], overrides: Partial<Env> = {}, queue = "plaudit-events") {
  const batch = createMessageBatch(
    queue,
    bodies.map((body, i) => ({ id: `m${i}`, timestamp: new Date(), attempts: 1, body })),
  );
  const ctx = createExecutionContext();
  await worker.queue(batch, { ...env, ...overrides }, ctx);
  const result = await getQueueResult(batch, ctx);
  return { acked: [...result.explicitAcks].sort(), retried: result.retryMessages.map((m: { msgId: string }) => m.msgId).sort() };
}

/** The item's stored snapshot in D1, from the database (both, while a reshard moves it) that the count layout names for it. */
export async function d1Counts(item: string): Promise<{ seq: number; counts: Counts } | null> {
  const { found, failed } = await readD1Rows(env, [item], "reconcile", 30_000);
  if (failed.length > 0) throw new Error(`the count database of ${item} cannot be read`);
  const stored = found.get(item);
  return stored ? { seq: stored.seq, counts: stored.counts } : null;
}

/** The item's whole row in the count database that holds it. */
export async function d1Row(item: string): Promise<Record<string, unknown> | null> {
  const [type, id] = splitItem(item);
  return await countDatabaseFor(env, item).prepare("SELECT * FROM item_counts WHERE item_type = ? AND item_id = ?").bind(type, id).first();
}

export async function central(): Promise<CentralStore> {
  const store = await centralStore(env);
  if (!store) throw new Error("the tests run with a central store");
  return store;
}

/**
 * `settled`, with the acknowledgements stored as well, not only held in the
 * object's memory (the sweep commits them, ACK_SWEEP_MS after a burst's first change): an object
 * killed before that resends its last emission when it starts again, and
 * that resend writes back a store row deleted meanwhile. A test that kills
 * objects after changing the stores starts from here.
 */
export async function settledDurably(item: string, timeout = 20_000): Promise<Counts> {
  const counts = await settled(item, timeout);
  await vi.waitFor(async () => expect(await runInDurableObject(itemStub(item), (instance) => instance.emitter.unfolded)).toBe(false), { timeout, interval: 100 });
  return counts;
}

const SETTLED_POLL_MS = 100;

/**
 * Waits until the item's object has had its current snapshot and every edge
 * acknowledged, and has stayed so for as long as a like answered just before
 * the call takes to show there: its delivery begins USER_DELIVERY_DELAY_MS
 * after its commit, the item applies it within ITEM_COMMIT_WINDOW_MS, and a
 * poll's interval more is room for the call's trip and a busy thread's late
 * timer (at most `timeout` ms in all). A hot item's children report on their
 * own clock: hot tests wait with settledLikes.
 */
export async function settled(item: string, timeout = 20_000): Promise<Counts> {
  const stub = itemStub(item);
  const quietMs = USER_DELIVERY_DELAY_MS + config(env).ITEM_COMMIT_WINDOW_MS + SETTLED_POLL_MS;
  let since: { seq: number; at: number } | null = null;
  return await vi.waitFor(
    async () => {
      const state = await stub.emissionState();
      const settledNow = state.seq > 0 && state.ackedSeq === state.seq && state.pendingEdges === 0;
      if (!settledNow || since?.seq !== state.seq) since = settledNow ? { seq: state.seq, at: Date.now() } : null;
      expect(state.seq).toBeGreaterThan(0);
      expect(state.ackedSeq).toBe(state.seq);
      expect(state.pendingEdges).toBe(0);
      expect(Date.now() - since!.at).toBeGreaterThanOrEqual(quietMs);
      return state.counts;
    },
    { timeout, interval: SETTLED_POLL_MS },
  );
}
