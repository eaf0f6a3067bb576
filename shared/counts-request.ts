import type { z } from "zod";
import { COUNTER_TYPES, ITEM_TYPES, type CounterType, type ItemType } from "./counters";
import { u64IdOf } from "./ids";
import { MAX_BATCH_ITEMS, type CountsRequest, type ItemRef } from "./schemas";

type CountsRequestBody = z.output<typeof CountsRequest>;

const itemTypes: ReadonlySet<unknown> = new Set(ITEM_TYPES);
const counterTypes: ReadonlySet<unknown> = new Set(COUNTER_TYPES);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * An item reference as the ItemRef schema reads it, without zod, or null
 * where the schema may say otherwise: every like, unlike, save, unsave,
 * view and share names one, and each item of a counts body is one. Checked
 * against the schema by test/node/counts-request.test.ts.
 */
export function plainItemRef(value: unknown): ItemRef | null {
  if (!isObject(value)) return null;
  const id = u64IdOf(value.item_id);
  if (id === undefined || !itemTypes.has(value.item_type)) return null;
  return { item_id: id, item_type: value.item_type as ItemType };
}

/**
 * A `POST /v1/counts` body as the CountsRequest schema reads it, without zod:
 * a feed sends this on every read, and the schema's generic walk over 50 to
 * 100 items costs more CPU than the read itself when the caches answer.
 * Answers null for anything it does not accept exactly as the schema does
 * (an optional field present as undefined too), so the caller falls back on
 * the schema, whose answer and error messages stay the only ones
 * (test/node/counts-request.test.ts checks that it agrees with the schema).
 */
export function plainCountsRequest(value: unknown): CountsRequestBody | null {
  if (!isObject(value)) return null;
  const { items, counter_types, unique_viewers } = value;
  if (!Array.isArray(items) || items.length < 1 || items.length > MAX_BATCH_ITEMS) return null;
  const refs: ItemRef[] = [];
  for (const item of items) {
    const ref = plainItemRef(item);
    if (ref === null) return null;
    refs.push(ref);
  }
  const body: CountsRequestBody = { items: refs };
  if ("counter_types" in value) {
    if (!Array.isArray(counter_types) || counter_types.length < 1) return null;
    for (const type of counter_types) if (!counterTypes.has(type)) return null;
    body.counter_types = [...(counter_types as CounterType[])];
  }
  if ("unique_viewers" in value) {
    if (typeof unique_viewers !== "boolean") return null;
    body.unique_viewers = unique_viewers;
  }
  return body;
}
