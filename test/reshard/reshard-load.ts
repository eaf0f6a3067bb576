import { env } from "cloudflare:workers";
import { expect, vi } from "vitest";
import { countDatabaseIndex } from "../../shared/count-databases";
import type { ReshardResponse } from "../../shared/reshard";
import { runReshard } from "../../shared/reshard-run";
import { countDatabaseAt } from "../../workers/stores/count-layout";
import { splitItem } from "../../workers/stores/item-key";
import { writeSettingsRow } from "../../workers/stores/item-settings";
import { call, freshId, json, like, newUser, tokenFor } from "../workers/helpers";
import { scrape, total } from "../workers/metrics-exposition";
import { central, settled } from "../workers/pipeline-helpers";

/** Items every test reads as one feed; each is liked once before the reshard and again while it runs. */
const ITEMS = 24;
/** A reshard under load waits out four phases of 1 s and drains twice: more than the project's 30 s on a busy machine. */
export const RESHARD_TEST_MS = 120_000;
/** Likes sent while the reshard runs (each by a new user, on the items in turn). */
const WRITES = 48;

export type Load = {
  ids: string[];
  keys: string[];
  hidden: string;
  likes: Map<string, number>;
  service: string;
};

/**
 * Items liked once each and drained into the stores, under the default
 * current layout; one of them hides its counts by a settings row written to D1
 * only (as rows stored before the central store kept settings are), which
 * the reshard must bring to the central store before any feed reads it there.
 */
export async function seedLoad(): Promise<Load> {
  const ids = Array.from({ length: ITEMS }, () => freshId());
  const keys = ids.map((id) => `post:${id}`);
  const hidden = keys[0]!;
  await writeSettingsRow(env, hidden, { owner: "owner", visibility: "public", hideCounts: true }, Date.now());
  for (const id of ids) expect((await like((await newUser()).token, id)).status).toBe(200);
  for (const key of keys) await settled(key);
  return { ids, keys, hidden, likes: new Map(keys.map((key) => [key, 1])), service: await tokenFor(freshId(), { role: "service" }) };
}

/** One reshard step through the route, as `npm run reshard` sends it. */
export function reshardCall(load: Load) {
  return async (request: { databases: number; limit: number }): Promise<ReshardResponse> => {
    const response = await call("POST", "/v1/admin/reshard", { token: load.service, body: request });
    expect(response.status).toBe(200);
    return await json<ReshardResponse>(response);
  };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs the reshard to its end, as the script does. */
export const reshard = (load: Load, databases: number, send = reshardCall(load), onProgress?: (step: ReshardResponse) => void) =>
  runReshard({ databases, limit: 7, send, sleep, onProgress });

/** What the feed load saw so far: feeds answered, and those of them marked stale or partial. */
export type Tally = { feeds: number; stale: number };

/**
 * Runs `work` (the reshard) while a write load (WRITES likes, each checked
 * 200) and a feed load (the whole list, over and over) run beside it, and
 * checks every feed answer as it comes: marked stale or partial, or every
 * item's likes between what it had before the reshard and what was sent to
 * it so far (never zero: each has likes), and the hidden item's likes never shown.
 */
export async function underLoad(load: Load, work: (tally: Tally) => Promise<void>): Promise<Tally> {
  const sent = new Map(load.likes);
  const floor = new Map(load.likes);
  let writing = true;
  let reshardDone = false;
  const writes = async () => {
    for (let w = 0; w < WRITES; w++) {
      const key = load.keys[w % load.keys.length]!;
      sent.set(key, sent.get(key)! + 1);
      const response = await like((await newUser()).token, splitItem(key)[1]);
      expect(response.status).toBe(200);
      load.likes.set(key, load.likes.get(key)! + 1);
      // Pace the writes over the whole reshard, so every phase meets some.
      if (!reshardDone) await sleep(60);
    }
  };
  const writer = (async () => {
    try {
      await writes();
    } finally {
      writing = false;
    }
  })();
  const tally: Tally = { feeds: 0, stale: 0 };
  const body = { items: load.ids.map((item_id) => ({ item_id, item_type: "post" })) };
  const reader = (async () => {
    while (writing || !reshardDone) {
      const response = await call("POST", "/v1/counts", { body });
      expect(response.status).toBe(200);
      const answer = await json<{ counts: Record<string, { likes: number | null } | null>; partial?: boolean }>(response);
      tally.feeds++;
      // A breath between feeds: a loop that never waits on a timer keeps the runtime's timers (the other loops' pauses) from firing.
      await sleep(5);
      if (response.headers.get("x-stale-data") === "true" || answer.partial) {
        tally.stale++;
        continue;
      }
      for (const key of load.keys) {
        const likes = answer.counts[key]?.likes;
        if (key === load.hidden) expect(likes, `${key} hides its counts`).toBeNull();
        else {
          expect(likes, `${key} read ${likes}, had ${floor.get(key)} before the reshard`).toBeGreaterThanOrEqual(floor.get(key)!);
          expect(likes).toBeLessThanOrEqual(sent.get(key)!);
        }
      }
    }
  })();
  try {
    await work(tally);
  } finally {
    reshardDone = true;
  }
  await Promise.all([writer, reader]);
  return tally;
}

/**
 * An item's row of `table` is in its database of a layout of `databases`,
 * with `column` at `expected`, and in no other database.
 */
export async function expectOnlyAtHome(key: string, databases: number, table: "item_counts" | "item_settings", column: string, expected: number): Promise<void> {
  const home = countDatabaseIndex(key, databases);
  for (let index = 0; index < databases; index++) {
    const row = await countDatabaseAt(env, index)
      .prepare(`SELECT ${column} AS value FROM ${table} WHERE item_type = ?1 AND item_id = ?2`)
      .bind(...splitItem(key))
      .first<{ value: number }>();
    if (index === home) expect(row?.value, `${key}'s ${table} row in its database ${index}`).toBe(expected);
    else expect(row, `${key}'s ${table} row left in database ${index}`).toBeNull();
  }
}

/**
 * After the drain: each item's object holds every like sent; its row in the
 * layout of `databases` holds the same counts, and no other database holds a
 * row of it; the central store holds them too, with the hidden item's
 * settings; and a feed reads them exactly.
 */
export async function expectAgreement(load: Load, databases: number): Promise<void> {
  const store = await central();
  for (const key of load.keys) {
    const counts = await settled(key);
    expect(counts.likes, `${key}: every like lands`).toBe(load.likes.get(key));
    await expectOnlyAtHome(key, databases, "item_counts", "likes", counts.likes);
    expect((await store.readCounts(key))?.counts.likes).toBe(counts.likes);
  }
  const { rows } = await store.readFeed([load.hidden]);
  expect(rows.get(load.hidden)?.settings?.hideCounts).toBe(true);
  await vi.waitFor(
    async () => {
      const response = await call("POST", "/v1/counts", { body: { items: load.ids.map((item_id) => ({ item_id, item_type: "post" })) } });
      const answer = await json<{ counts: Record<string, { likes: number | null }> }>(response);
      for (const key of load.keys) expect(answer.counts[key]?.likes).toBe(key === load.hidden ? null : load.likes.get(key));
    },
    { timeout: 10_000, interval: 100 },
  );
}

/** Feed reads, and those over the bound of 2 store round trips, as /metrics counts them. */
export async function feedReads(load: Load): Promise<{ reads: number; overBound: number; central: number }> {
  const families = await scrape(load.service);
  const feeds = (labels: Record<string, string>) => labels.caller === "/v1/counts";
  return {
    reads: total(families, "plaudit_store_reads_total", feeds),
    overBound: total(families, "plaudit_store_reads_total", (labels) => feeds(labels) && Number(labels.round_trips) > 2),
    central: total(families, "plaudit_store_round_trips_total", (labels) => feeds(labels) && labels.store === "central"),
  };
}
