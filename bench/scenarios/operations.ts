// The operations a simulated user can do. Each checks its own answer: a like
// or unlike against the exact model, a read against the API's shape and, when
// no writes are running, against the exact expected counts. To add an
// operation (views, shares, saves...), write one more `Operation` here and
// give it a weight in a scenario.
import type { HttpClient, HttpResult } from "../lib/http";
import type { LikeModel } from "../lib/model";
import { hasLiked, ITEM_TYPE, likeCounts, toggle } from "../lib/plaudit";
import type { Recorder } from "../lib/recorder";
import type { ItemSights } from "../lib/sights";
import type { ItemPicker } from "../lib/zipf";

export type RunContext = {
  http: HttpClient;
  model: LikeModel;
  picker: ItemPicker;
  recorder: Recorder;
  tokens: ReadonlyMap<string, string>;
  random: () => number;
  /** Share of writes sent twice at once, as a client retry racing the original. */
  duplicateShare: number;
  /** True when no writes run, so every count read must equal the model's count. */
  readsExact: boolean;
  /** Every item a request names, for plaudit's server only (bench/lib/sights.ts). */
  sights?: ItemSights;
};

export type Operation = {
  name: string;
  kind: "read" | "write";
  run(ctx: RunContext, user: string): Promise<void>;
};

const FEED_SIZE = 50;

/** Server errors and lost answers are errors; any other unexpected answer breaks the contract. */
function isError(res: HttpResult): boolean {
  return res.status === 0 || res.status >= 500;
}

function errorDetail(res: HttpResult): string {
  return res.error ?? `${res.status} ${JSON.stringify(res.body)}`.slice(0, 300);
}

/** Likes or unlikes an item; sometimes sends the same request twice at once. */
export async function writeToggle(ctx: RunContext, user: string, item: string, on: boolean): Promise<void> {
  const token = ctx.tokens.get(user)!;
  ctx.sights?.meet([item], "write");
  const copies = ctx.random() < ctx.duplicateShare ? 2 : 1;
  const name = on ? "like" : "unlike";
  // Each copy is recorded as it is answered: the recorder takes that moment as the answer's time.
  const outcomes = await Promise.all(
    Array.from({ length: copies }, async () => {
      const outcome = await toggle(ctx.http, token, item, on);
      if (outcome.kind === "invalid") {
        ctx.recorder.record(name, outcome.res.ms, "error", outcome.why);
        ctx.recorder.violation(`user ${user} item ${item} ${name}: ${outcome.why}`);
      } else if (outcome.kind === "rejected") {
        ctx.recorder.record(name, outcome.res.ms, "rejected");
      } else {
        ctx.recorder.record(name, outcome.res.ms, isError(outcome.res) ? "error" : "ok", errorDetail(outcome.res));
      }
      return outcome;
    }),
  );
  const answers = outcomes.flatMap((o) => (o.kind === "answered" ? [o.answer] : []));
  if (answers.length === 0) return;
  const why = ctx.model.record(user, item, answers);
  if (why) ctx.recorder.violation(why);
}

/** A view or a share: a plain event count, checked for its status only (its count is not exact by design). */
function eventOperation(counter: "view" | "share"): Operation {
  return {
    name: counter,
    kind: "write",
    async run(ctx, user) {
      const item = ctx.picker.forRead();
      ctx.sights?.meet([item], "write");
      const res = await ctx.http.request("POST", `/v1/${counter}`, { token: ctx.tokens.get(user)!, body: { item_id: item, item_type: ITEM_TYPE } });
      if (res.status === 200 || res.status === 202) ctx.recorder.record(this.name, res.ms, "ok");
      else if (res.status === 429) ctx.recorder.record(this.name, res.ms, "rejected");
      else {
        ctx.recorder.record(this.name, res.ms, "error", errorDetail(res));
        if (!isError(res)) ctx.recorder.violation(`${counter}: ${errorDetail(res)}`);
      }
    },
  };
}

export const viewEvent = eventOperation("view");
export const shareEvent = eventOperation("share");

export const likeOrUnlike: Operation = {
  name: "like/unlike",
  kind: "write",
  async run(ctx, user) {
    const item = ctx.picker.forWrite();
    const known = ctx.model.liked(user, item);
    // Mostly flip the edge; one time in five repeat it, so already_liked and not_liked are checked too.
    const on = known === undefined ? ctx.random() < 0.5 : ctx.random() < 0.8 ? !known : known;
    await writeToggle(ctx, user, item, on);
  },
};

function checkCount(ctx: RunContext, what: string, item: string, value: unknown): void {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    ctx.recorder.violation(`${what}: item ${item} has count ${JSON.stringify(value)}`);
    return;
  }
  if (!ctx.readsExact) return;
  const expected = ctx.model.expectedCount(item);
  if (expected !== undefined && value !== expected) {
    ctx.recorder.violation(`${what}: item ${item} counts ${value}, expected ${expected}`);
  }
}

export const feedRead: Operation = {
  name: "feed (50 counts)",
  kind: "read",
  async run(ctx) {
    const items = ctx.picker.batch(FEED_SIZE);
    ctx.sights?.meet(items, "read");
    const { res, counts } = await likeCounts(ctx.http, items);
    if (!counts) {
      ctx.recorder.record(this.name, res.ms, isError(res) ? "error" : "rejected", errorDetail(res));
      if (!isError(res) && res.status !== 429) ctx.recorder.violation(`feed: ${errorDetail(res)}`);
      return;
    }
    ctx.recorder.record(this.name, res.ms, "ok");
    for (const item of items) checkCount(ctx, "feed", item, counts.get(item));
  },
};

/** The items in feed-sized batches, every item once, in order. */
export function feedBatches(items: readonly string[], size = FEED_SIZE): string[][] {
  const batches: string[][] = [];
  for (let i = 0; i < items.length; i += size) batches.push(items.slice(i, i + size));
  return batches;
}

/**
 * Every item shown once in a feed (POST /v1/counts), as an app shows an item
 * before its users like it: the isolate then knows each item's settings and
 * counts, as it would for an item in any feed of the last PRIVACY_STALE_MS.
 * Off the clock, so nothing is timed: a feed answered with anything but 200
 * or 429 (a lost answer too) fails the run, and a count that is not a whole
 * number at least 0 is a wrong answer. Only the items of an answered feed
 * count as met; resolves to the number of feeds refused with 429.
 */
export async function showEveryItem(ctx: RunContext, items: readonly string[], recorder: Recorder): Promise<number> {
  let limited = 0;
  const checks = { ...ctx, recorder, readsExact: false };
  await Promise.all(
    feedBatches(items).map(async (batch) => {
      const { res, counts } = await likeCounts(ctx.http, batch);
      if (res.status === 429) limited++;
      else if (!counts) recorder.violation(`feed before the phase: ${errorDetail(res)}`);
      else {
        ctx.sights?.meet(batch, "read");
        for (const item of batch) checkCount(checks, "feed before the phase", item, counts.get(item));
      }
    }),
  );
  return limited;
}

export const countRead: Operation = {
  name: "count",
  kind: "read",
  async run(ctx) {
    const item = ctx.picker.forRead();
    ctx.sights?.meet([item], "read");
    const res = await ctx.http.request("GET", `/v1/count?item_id=${item}&item_type=${ITEM_TYPE}`);
    if (res.status !== 200) {
      ctx.recorder.record(this.name, res.ms, isError(res) ? "error" : "rejected", errorDetail(res));
      if (!isError(res) && res.status !== 429) ctx.recorder.violation(`count: ${errorDetail(res)}`);
      return;
    }
    ctx.recorder.record(this.name, res.ms, "ok");
    checkCount(ctx, "count", item, (res.body as { counts?: { likes?: unknown } }).counts?.likes);
  },
};

/** has_liked is exact at any time: it comes from the user's own object, and this user's writes are sequential. */
export const hasLikedRead: Operation = {
  name: "has_liked",
  kind: "read",
  async run(ctx, user) {
    const items = ctx.picker.batch(FEED_SIZE);
    ctx.sights?.meet(items, "read");
    const { res, liked } = await hasLiked(ctx.http, ctx.tokens.get(user)!, items);
    if (!liked) {
      ctx.recorder.record(this.name, res.ms, isError(res) ? "error" : "rejected", errorDetail(res));
      if (!isError(res) && res.status !== 429) ctx.recorder.violation(`has_liked: ${errorDetail(res)}`);
      return;
    }
    ctx.recorder.record(this.name, res.ms, "ok");
    for (const item of items) {
      const expected = ctx.model.liked(user, item);
      if (expected !== undefined && liked[item] !== expected) {
        ctx.recorder.violation(`has_liked: user ${user} item ${item} is ${liked[item]}, expected ${expected}`);
      } else if (expected === undefined) {
        const why = ctx.model.settle(user, item, liked[item] === true);
        if (why) ctx.recorder.violation(why);
      }
    }
  },
};
