import { createMessageBatch } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { RecheckRequest, ReconcileSlice } from "../../shared/emissions";
import { DrainIntentsRequest } from "../../shared/intents";
import { PassStep } from "../../shared/passes";
import { ForgetUserRequest } from "../../shared/removal";
import { takeRequests } from "../../workers/pipeline/requests";
import { headEmission } from "./pipeline-helpers";

const batchOf = (bodies: readonly unknown[]) =>
  createMessageBatch(
    "plaudit-events",
    bodies.map((body, i) => ({ id: `m${i}`, timestamp: new Date(), attempts: 1, body })),
  );

describe("an events-queue batch split by request kind", () => {
  afterEach(() => vi.restoreAllMocks());

  it("gives each schema the valid messages of its kind, and leaves emissions and malformed or unknown messages for the aggregator", () => {
    const parses = vi.spyOn(RecheckRequest, "safeParse");
    const batch = batchOf([
      headEmission("post:1", { seq: 1, counts: { likes: 1 } }),
      { v: 1, kind: "recheck", item: "post:2" },
      { v: 1, kind: "drain_intents", user: "42", attempt: 0 },
      { v: 1, kind: "forget_user", user: "43" },
      { v: 1, kind: "pass_step", pass: "rebuild-1", range: 0, step: 3 },
      { v: 1, kind: "reconcile_slice", reason: "sample", after: { draw: -1, key: "" }, limit: 10 },
      { v: 1, kind: "recheck", item: "not an item" },
      { v: 1, kind: "no_such_request", item: "post:3" },
      null,
      "recheck",
      { v: 1, kind: "recheck", item: "post:4" },
    ]);
    const drains = takeRequests(batch, DrainIntentsRequest);
    const forgets = takeRequests(drains.others, ForgetUserRequest);
    const steps = takeRequests(forgets.others, PassStep);
    const slices = takeRequests(steps.others, ReconcileSlice);
    const rechecks = takeRequests(slices.others, RecheckRequest);
    const ids = (taken: { requests: { message: Message<unknown> }[] }) => taken.requests.map(({ message }) => message.id);
    expect([drains, forgets, steps, slices].map(ids)).toEqual([["m2"], ["m3"], ["m4"], ["m5"]]);
    expect(ids(rechecks)).toEqual(["m1", "m10"]);
    expect(rechecks.requests.map(({ request }) => request.item)).toEqual(["post:2", "post:4"]);
    expect(rechecks.others.messages.map((message) => message.id)).toEqual(["m0", "m6", "m7", "m8", "m9"]);
    expect(rechecks.others.queue).toBe("plaudit-events");
    // Only the bodies of its kind meet the schema: an emission or another request builds no failed parse.
    expect(parses.mock.calls.map(([body]) => body)).toEqual([
      { v: 1, kind: "recheck", item: "post:2" },
      { v: 1, kind: "recheck", item: "not an item" },
      { v: 1, kind: "recheck", item: "post:4" },
    ]);
  });

  it("passes the batch itself on when none of its messages is of the kind", () => {
    const batch = batchOf([headEmission("post:5", { seq: 1, counts: { likes: 1 } }), { v: 1, kind: "recheck", item: "post:6" }]);
    const { requests, others } = takeRequests(batch, ForgetUserRequest);
    expect(requests).toEqual([]);
    expect(others).toBe(batch);
  });
});
