import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { z } from "zod";
import {
  PlauditClient,
  PlauditError,
  type BlockResult,
  type ClientOptions,
  type CountResult,
  type CountsResult,
  type ErrorBody,
  type EventResult,
  type HasLikedResult,
  type HistoryResult,
  type ItemRef,
  type ItemSettingsInput,
  type ItemSettingsResult,
  type LikeResult,
  type LiveMessage,
  type LikersResult,
  type RebuildStepResult,
  type ReshardStepResult,
} from "../../clients/typescript/src/index";
import type { LiveServerMessage } from "../../shared/live";
import type { ReshardResponse } from "../../shared/reshard";
import type {
  BlockResponse,
  CountResponse,
  CountsResponse,
  ErrorResponse,
  EventResponse,
  HasLikedResponse,
  HistoryResponse,
  ItemRef as ItemRefSchema,
  ItemSettingsBody,
  ItemSettingsResponse,
  LikeResponse,
  LikersResponse,
  RebuildResponse,
} from "../../shared/schemas";
import { retryAfterSeconds } from "../../clients/typescript/src/retry";
import { userObjectName } from "../../shared/object-names";
import { freshId, like, newUser, tokenFor } from "./helpers";
import { d1Counts } from "./pipeline-helpers";

const RATE_LIMIT_PER_MINUTE = 30;

/** Every request the client sends, answered by the real Worker (and its objects) in this workerd. */
function recordingFetch() {
  const sent: Request[] = [];
  const answers: Response[] = [];
  const fetch = async (request: Request) => {
    sent.push(request.clone());
    const response = await exports.default.fetch(request);
    answers.push(response.clone());
    return response;
  };
  return { fetch, sent, answers };
}

function clientFor(token: string | undefined, options: Partial<ClientOptions> = {}) {
  return new PlauditClient({ baseUrl: "http://plaudit.test", fetch: (r) => exports.default.fetch(r), token, ...options });
}

async function caught(promise: Promise<unknown>): Promise<PlauditError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PlauditError);
  return error as PlauditError;
}

/**
 * Moves a user's rate-limit buckets through time without waiting: their
 * arrival times shift by `ms` (negative: time passes), and the object
 * restarts to load them.
 */
async function shiftBuckets(userId: string, ms: number): Promise<void> {
  const stub = env.USER_LIKES.get(env.USER_LIKES.idFromName(userObjectName(userId)));
  await runInDurableObject(stub, (_instance, state) => {
    state.storage.sql.exec("UPDATE state SET tats = (SELECT json_group_object(key, value + ?) FROM json_each(state.tats))", ms);
  });
  // workerd logs the abort as an uncaught exception; it is the restart asked for.
  await runInDurableObject(stub, (_instance, state) => state.abort("restart with the shifted buckets")).catch(() => {});
}

/**
 * Uses up a user's per-minute bucket and keeps it empty for at least another
 * second, so their next like is a 429 however slow the machine. The bucket
 * refills one like per two seconds meanwhile, so it may take more likes than its size.
 */
async function exhaustRateLimit(user: { id: string; token: string }): Promise<void> {
  for (let i = 0; i < 2 * RATE_LIMIT_PER_MINUTE; i++) {
    if ((await like(user.token, freshId())).status === 429) return shiftBuckets(user.id, 1000);
  }
  expect.fail(`no 429 after ${2 * RATE_LIMIT_PER_MINUTE} likes`);
}

/** A client of a user whose rate limit is used up, recording what it sends, gets and waits for. */
async function rateLimitedClient(options: Partial<ClientOptions> = {}, afterWait?: (userId: string, ms: number) => Promise<void>) {
  const user = await newUser();
  await exhaustRateLimit(user);
  const recorded = recordingFetch();
  const waits: number[] = [];
  const sleep = async (ms: number) => {
    waits.push(ms);
    await afterWait?.(user.id, ms);
  };
  return { client: clientFor(user.token, { fetch: recorded.fetch, sleep, ...options }), waits, ...recorded };
}

describe("the TypeScript client against the Worker", () => {
  it("likes an item, then answers already_liked", async () => {
    const { token } = await newUser();
    const client = clientFor(token);
    const item = freshId();
    expect(await client.like(item, "post")).toEqual({ status: "liked", count: 1, count_formatted: "1", user_liked: true });
    expect((await client.like(item, "post")).status).toBe("already_liked");
  });

  it("unlikes an item, then answers not_liked", async () => {
    const { token } = await newUser();
    const client = clientFor(token);
    const item = freshId();
    await client.like(item, "reel");
    expect(await client.unlike(item, "reel")).toEqual({ status: "unliked", count: 0, count_formatted: "0", user_liked: false });
    expect((await client.unlike(item, "reel")).status).toBe("not_liked");
  });

  it("saves and unsaves an item", async () => {
    const { token } = await newUser();
    const client = clientFor(token);
    const item = freshId();
    expect(await client.save(item, "post")).toEqual({ status: "saved", count: 1, count_formatted: "1", user_saved: true });
    expect((await client.save(item, "post")).status).toBe("already_saved");
    expect(await client.unsave(item, "post")).toEqual({ status: "unsaved", count: 0, count_formatted: "0", user_saved: false });
    expect((await client.unsave(item, "post")).status).toBe("not_saved");
  });

  it("counts a view and a share", async () => {
    const { token } = await newUser();
    const client = clientFor(token);
    const item = freshId();
    expect(await client.view(item, "post")).toEqual({ status: "counted", count: 1, count_formatted: "1" });
    expect(await client.share(item, "post")).toEqual({ status: "counted", count: 1, count_formatted: "1" });
  });

  it("reads one item's counts", async () => {
    const { token } = await newUser();
    const item = freshId();
    await clientFor(token).like(item, "post");
    const result = await clientFor(undefined).count(item, "post");
    expect(result).toMatchObject({ item_id: item, item_type: "post", counts: { likes: 1, views: 0, shares: 0, saves: 0 } });
    expect(Number.isNaN(Date.parse(result.as_of))).toBe(false);
  });

  it("reads many items' counts, filtered by counter type", async () => {
    const { token } = await newUser();
    const [a, b] = [freshId(), freshId()];
    await clientFor(token).like(a, "post");
    const result = await clientFor(undefined).counts(
      [
        { item_id: a, item_type: "post" },
        { item_id: Number(b.slice(-6)), item_type: "comment" },
      ],
      ["likes"],
    );
    expect(result.counts).toEqual({ [`post:${a}`]: { likes: 1 }, [`comment:${Number(b.slice(-6))}`]: { likes: 0 } });
    expect(result.partial).toBeUndefined();
  });

  it("tells exactly which items the caller likes", async () => {
    const { token } = await newUser();
    const client = clientFor(token);
    const [liked, other] = [freshId(), freshId()];
    await client.like(liked, "post");
    expect(await client.hasLiked([liked, other], "post")).toEqual({ liked: { [liked]: true, [other]: false } });
  });

  it("sets item settings and blocks with a service token, and sends a grant that lets a follower like", async () => {
    const admin = clientFor(await tokenFor(freshId(), { role: "service" }));
    const [owner, follower] = [await newUser(), await newUser()];
    const item = freshId();
    const set = await admin.setItemSettings(item, "post", { owner_id: owner.id, visibility: "followers" });
    expect(set).toMatchObject({ item_id: item, owner_id: owner.id, visibility: "followers", hide_counts: false });
    expect(await admin.itemSettings(item, "post")).toEqual(set);
    const client = clientFor(follower.token);
    expect((await caught(client.like(item, "post"))).code).toBe("not_found");
    const grant = await tokenFor(follower.id, { expiresIn: 600, claims: { followers_of: [owner.id] } });
    expect((await client.like(item, "post", { grant })).status).toBe("liked");
    expect(await admin.block(owner.id, follower.id)).toMatchObject({ blocking: true });
    expect((await admin.blocking(owner.id, follower.id)).blocking).toBe(true);
    expect(await admin.unblock(owner.id, follower.id)).toMatchObject({ blocking: false, since: null });
  });

  it("pages through an item's likers", async () => {
    const item = freshId();
    const fans = [await newUser(), await newUser()];
    for (const fan of fans) expect((await clientFor(fan.token).like(item, "post")).status).toBe("liked");
    const reader = clientFor((await newUser()).token);
    await expect.poll(async () => (await reader.likers(item, "post")).likers.length, { timeout: 20_000 }).toBe(2);
    const first = await reader.likers(item, "post", { limit: 1 });
    expect(first.likers.map((l) => l.user_id)).toEqual([fans[1]!.id]);
    const second = await reader.likers(item, "post", { limit: 1, cursor: first.next_cursor! });
    expect(second.likers.map((l) => l.user_id)).toEqual([fans[0]!.id]);
  });

  it("steps through a rebuild with a service token until it is complete", async () => {
    const user = await newUser();
    const item = freshId();
    expect((await clientFor(user.token).like(item, "post")).status).toBe("liked");
    await expect.poll(async () => (await d1Counts(`post:${item}`))?.counts.likes, { timeout: 20_000 }).toBe(1);
    const admin = clientFor(await tokenFor(freshId(), { role: "service" }));
    let step = await admin.rebuildStep("d1", null, 1);
    let checked = step.checked;
    while (step.next !== null) {
      step = await admin.rebuildStep("d1", step.next, 1);
      checked += step.checked;
    }
    expect(step.progress).toBe(1);
    expect(checked).toBeGreaterThanOrEqual(1);
  });

  it("reaches any endpoint through request(), with the client's token", async () => {
    const user = freshId();
    const service = clientFor(await tokenFor(freshId(), { role: "service" }));
    expect(await service.request("GET", `/v1/admin/users/${user}`)).toMatchObject({ user_id: user, pending_deliveries: 0 });
  });

  it("surfaces a 400 as a PlauditError with every validation problem in details", async () => {
    const { fetch, sent } = recordingFetch();
    const client = clientFor(undefined, { fetch });
    const error = await caught(client.counts([{ item_id: "007", item_type: "post" }], ["likes", "claps" as never]));
    expect(error.status).toBe(400);
    expect(error.code).toBe("invalid_request");
    expect(error.message).toBe("The request body is invalid.");
    expect(error.details.map((d) => d.path)).toEqual(["items.0.item_id", "counter_types.1"]);
    expect(error.retryAfter).toBeUndefined();
    expect(sent).toHaveLength(1);
  });

  it("does not retry a 401", async () => {
    const { fetch, sent } = recordingFetch();
    const error = await caught(clientFor("not.a.token", { fetch }).like(freshId(), "post"));
    expect([error.status, error.code]).toEqual([401, "unauthorized"]);
    expect(sent).toHaveLength(1);
  });

  it("retries a 429 after the Retry-After the API named, then succeeds", async () => {
    const { client, answers, waits } = await rateLimitedClient({}, (userId, ms) => shiftBuckets(userId, -ms));
    expect((await client.like(freshId(), "post")).status).toBe("liked");
    expect(answers.map((a) => a.status)).toEqual([429, 200]);
    const retryAfter = Number(answers[0]!.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(waits).toEqual([retryAfter * 1000]);
  });

  it("gives up on a 429 after maxRetries, with the error's retryAfter", async () => {
    const { client, answers, waits } = await rateLimitedClient({ maxRetries: 2 });
    const error = await caught(client.like(freshId(), "post"));
    expect([error.status, error.code]).toEqual([429, "rate_limited"]);
    expect(answers.map((a) => a.status)).toEqual([429, 429, 429]);
    expect(waits).toEqual(answers.slice(0, 2).map((a) => Number(a.headers.get("retry-after")) * 1000));
    expect(error.retryAfter).toBe(Number(answers[2]!.headers.get("retry-after")));
  });

  it("does not wait for a Retry-After longer than maxRetryDelayMs", async () => {
    const { client, answers, waits } = await rateLimitedClient({ maxRetryDelayMs: 500 });
    expect((await caught(client.like(freshId(), "post"))).code).toBe("rate_limited");
    expect(answers).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it("sends one Idempotency-Key per idempotent call, the same on each retry", async () => {
    const { client, sent } = await rateLimitedClient({ maxRetries: 1 });
    const body = { item_id: freshId(), item_type: "post" };
    await caught(client.request("POST", "/v1/like", { body, idempotent: true }));
    await caught(client.request("POST", "/v1/like", { body, idempotent: true }));
    const keys = sent.map((r) => r.headers.get("idempotency-key"));
    expect(keys).toHaveLength(4);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[3]).toBe(keys[2]);
    expect(keys[2]).not.toBe(keys[0]);
  });

  it("sends an Idempotency-Key on event endpoints by default, and none on likes", async () => {
    const { token } = await newUser();
    const { fetch, sent } = recordingFetch();
    const client = clientFor(token, { fetch });
    await client.request("POST", "/v1/view", { body: { item_id: freshId(), item_type: "post" } }).catch(() => {});
    await client.request("POST", "/v1/share", { body: { item_id: freshId(), item_type: "post" } }).catch(() => {});
    await client.like(freshId(), "post");
    expect(sent.map((r) => r.headers.get("idempotency-key") !== null)).toEqual([true, true, false]);
  });

  it("fails with a timeout error when the answer does not come within timeoutMs", async () => {
    // An unresponsive network: the request is never answered, only aborted.
    const hanging = (request: Request) =>
      new Promise<Response>((_, reject) => request.signal.addEventListener("abort", () => reject(request.signal.reason)));
    const error = await caught(clientFor(undefined, { fetch: hanging, timeoutMs: 20 }).count(freshId(), "post"));
    expect([error.status, error.code]).toEqual([0, "timeout"]);
  });

  it("reads Retry-After as seconds or an HTTP date, else the body's retry_after", () => {
    const now = Date.parse("2026-11-30T09:00:00Z");
    expect(retryAfterSeconds("3", 60, now)).toBe(3);
    expect(retryAfterSeconds("Mon, 30 Nov 2026 09:00:05 GMT", undefined, now)).toBe(5);
    expect(retryAfterSeconds(null, 7, now)).toBe(7);
    expect(retryAfterSeconds("soon", undefined, now)).toBeUndefined();
  });

  it("has result and error types that are the service's own schemas (checked by the typecheck)", () => {
    expectTypeOf<LikeResult>().toEqualTypeOf<z.output<typeof LikeResponse>>();
    expectTypeOf<CountResult>().toEqualTypeOf<z.output<typeof CountResponse>>();
    expectTypeOf<CountsResult>().toEqualTypeOf<z.output<typeof CountsResponse>>();
    expectTypeOf<HasLikedResult>().toEqualTypeOf<z.output<typeof HasLikedResponse>>();
    expectTypeOf<HistoryResult>().toEqualTypeOf<z.output<typeof HistoryResponse>>();
    expectTypeOf<LiveMessage>().toEqualTypeOf<z.output<typeof LiveServerMessage>>();
    expectTypeOf<ErrorBody>().toEqualTypeOf<z.output<typeof ErrorResponse>>();
    expectTypeOf<ItemRef>().toEqualTypeOf<z.input<typeof ItemRefSchema>>();
    expectTypeOf<ItemSettingsInput>().toEqualTypeOf<z.input<typeof ItemSettingsBody>>();
    expectTypeOf<ItemSettingsResult>().toEqualTypeOf<z.output<typeof ItemSettingsResponse>>();
    expectTypeOf<EventResult>().toEqualTypeOf<z.output<typeof EventResponse>>();
    expectTypeOf<BlockResult>().toEqualTypeOf<z.output<typeof BlockResponse>>();
    expectTypeOf<RebuildStepResult>().toEqualTypeOf<z.output<typeof RebuildResponse>>();
    expectTypeOf<ReshardStepResult>().toEqualTypeOf<z.output<typeof ReshardResponse>>();
    expectTypeOf<LikersResult>().toEqualTypeOf<z.output<typeof LikersResponse>>();
  });
});
