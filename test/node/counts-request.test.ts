import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { COUNTER_TYPES, ITEM_TYPES } from "../../shared/counters";
import { plainCountsRequest, plainItemRef } from "../../shared/counts-request";
import { MAX_U64 } from "../../shared/ids";
import { CountsRequest, ItemRef, MAX_BATCH_ITEMS } from "../../shared/schemas";

const RUNS = 2_000;

/** Ids U64Id takes: canonical strings up to 2^64-1 and safe non-negative integers (-0 included: JSON.parse makes it). */
const validId = fc.oneof(
  fc.bigInt({ min: 0n, max: MAX_U64 }).map(String),
  fc.constantFrom("0", "9007199254740993", String(MAX_U64)),
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  fc.constantFrom(0, -0, Number.MAX_SAFE_INTEGER),
);

/** Ids just outside what U64Id takes. */
const nearId = fc.oneof(
  fc.constantFrom("", "007", "-1", "+1", " 1", "1 ", "1.0", "1e3", "0x10", "18446744073709551616", "99999999999999999999", "١٢", "1\n"),
  fc.constantFrom(-1, 0.5, 1.5, Number.MAX_SAFE_INTEGER + 1, 2 ** 64, Infinity, NaN),
  fc.bigInt({ min: MAX_U64 + 1n, max: MAX_U64 * 10n }).map(String),
  fc.constantFrom(null, true, [], {}, [1]),
);

const extraKeys = fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 });

const validItem = fc
  .record({ item_id: validId, item_type: fc.constantFrom(...ITEM_TYPES) })
  .chain((item) => extraKeys.map((extra) => ({ ...extra, ...item })));

const validBody = fc
  .record(
    {
      items: fc.array(validItem, { minLength: 1, maxLength: MAX_BATCH_ITEMS }),
      counter_types: fc.array(fc.constantFrom(...COUNTER_TYPES), { minLength: 1, maxLength: 6 }),
      unique_viewers: fc.boolean(),
    },
    { requiredKeys: ["items"] },
  )
  .chain((body) => extraKeys.map((extra) => ({ ...extra, ...body })));

/** A valid body with one thing changed to something the schema may refuse: the inputs a fast path is most likely to get wrong. */
const nearBody = fc.oneof(
  fc.tuple(validBody, fc.nat(), nearId).map(([body, i, id]) => ({ ...body, items: body.items.map((item, j) => (j === i % body.items.length ? { ...item, item_id: id } : item)) })),
  fc
    .tuple(validBody, fc.nat(), fc.constantFrom("Post", "", "posts", " post", null, 1, undefined))
    .map(([body, i, type]) => ({ ...body, items: body.items.map((item, j) => (j === i % body.items.length ? { ...item, item_type: type } : item)) })),
  fc.tuple(validBody, fc.nat(), fc.constantFrom(null, "post:1", [], 1)).map(([body, i, item]) => ({ ...body, items: body.items.map((it, j) => (j === i % body.items.length ? item : it)) })),
  fc.tuple(validBody, fc.array(validItem, { minLength: 0, maxLength: 3 })).map(([body, more]) => ({ ...body, items: [...body.items, ...more] })),
  validBody.map((body) => ({ ...body, items: [] })),
  validBody.map((body) => ({ ...body, items: Array.from({ length: MAX_BATCH_ITEMS + 1 }, (_, i) => body.items[i % body.items.length]) })),
  fc.tuple(validBody, fc.constantFrom([], ["claps"], ["Likes"], "likes", null, undefined, [null], ["likes", "x"])).map(([body, counter_types]) => ({ ...body, counter_types })),
  fc.tuple(validBody, fc.constantFrom("true", 1, 0, null, undefined, [])).map(([body, unique_viewers]) => ({ ...body, unique_viewers })),
  validBody.map((body) => ({ ...body, items: Object.fromEntries(body.items.entries()) })),
  validBody.map((body) => [body]),
);

/** The fast path may refuse anything; what it accepts, the schema must accept with the same value. */
function agreesWithSchema(value: unknown): void {
  const fast = plainCountsRequest(value);
  if (fast === null) return;
  const parsed = CountsRequest.safeParse(value);
  expect(parsed.success).toBe(true);
  expect(fast).toStrictEqual(parsed.data);
}

describe("plainCountsRequest, the POST /v1/counts body without zod", () => {
  it("accepts every valid body, with the value the schema gives", () => {
    fc.assert(
      fc.property(validBody, (body) => {
        expect(plainCountsRequest(body)).toStrictEqual(CountsRequest.parse(body));
      }),
      { numRuns: RUNS },
    );
  });

  it("accepts only what the schema accepts, and reads it as the schema does: near-valid bodies", () => {
    fc.assert(fc.property(nearBody, agreesWithSchema), { numRuns: RUNS });
  });

  it("accepts only what the schema accepts, and reads it as the schema does: bodies as JSON.parse gives them", () => {
    fc.assert(fc.property(fc.oneof(validBody, nearBody), (body) => agreesWithSchema(JSON.parse(JSON.stringify(body)))), { numRuns: RUNS });
  });

  it("accepts only what the schema accepts, and reads it as the schema does: any value", () => {
    fc.assert(fc.property(fc.anything(), agreesWithSchema), { numRuns: RUNS });
  });

  it("leaves refused bodies to the schema, so its error messages are the answer", () => {
    const body = { items: [{ item_id: "007", item_type: "post" }], counter_types: ["claps"] };
    expect(plainCountsRequest(body)).toBeNull();
    expect(CountsRequest.safeParse(body).success).toBe(false);
  });
});

describe("plainItemRef, a like's or a view's item without zod", () => {
  it("accepts every valid item, with the value the schema gives", () => {
    fc.assert(
      fc.property(validItem, (item) => {
        expect(plainItemRef(item)).toStrictEqual(ItemRef.parse(item));
      }),
      { numRuns: RUNS },
    );
  });

  it("accepts only what the schema accepts, and reads it as the schema does", () => {
    const nearItem = fc.oneof(
      fc.tuple(validItem, nearId).map(([item, item_id]) => ({ ...item, item_id })),
      fc.tuple(validItem, fc.constantFrom("Post", "", "posts", " post", null, 1, undefined)).map(([item, item_type]) => ({ ...item, item_type })),
      validItem.map(({ item_id }) => ({ item_id })),
      validItem.map(({ item_type }) => ({ item_type })),
      fc.constantFrom(null, "post:1", [], 1, [{ item_id: "1", item_type: "post" }]),
      fc.jsonValue({ maxDepth: 2 }),
    );
    fc.assert(
      fc.property(nearItem, (value) => {
        const fast = plainItemRef(value);
        const parsed = ItemRef.safeParse(value);
        if (fast === null) return;
        expect(parsed.success).toBe(true);
        expect(fast).toStrictEqual(parsed.data);
      }),
      { numRuns: RUNS },
    );
  });
});
