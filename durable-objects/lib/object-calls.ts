import { metrics } from "../../metrics/recorder";
import { config } from "../../shared/config";
import { withDeadline, type DeadlineClock } from "../../shared/deadline";
import type { EdgeChange } from "../../shared/edges";
import { itemObjectName, shardObjectName } from "../../shared/object-names";
import { HEAD } from "../../shared/placement";

/** The label each object class carries in `plaudit_object_calls_total`. */
export type ObjectLabel = "user_likes" | "item_counter" | "item_shard" | "live_hub";

/** A call's deadline: OBJECT_CALL_TIMEOUT_MS unless `timeoutMs` says otherwise, kept by the calling object's clock when it has one. */
export type CallDeadline = { timeoutMs?: number; clock?: DeadlineClock };

/**
 * Wraps a stub so that every method called through it (an RPC call, or
 * fetch), from the Worker or from another object:
 * - counts once in `plaudit_object_calls_total{caller,object}`: every object
 *   call plaudit makes is made through here (but the metrics accumulators',
 *   metrics/accumulators.ts, which have their own deadline and no count), so
 *   the counter is the cost of a route or an object's work in object
 *   requests, the unit Cloudflare bills;
 * - has a deadline (OBJECT_CALL_TIMEOUT_MS unless the caller gives its own;
 *   an object passes its clock, shared/deadline.ts):
 *   a hung object must not hang the request or the object waiting on it; the
 *   call is not cancelled, which is safe because every object method is
 *   idempotent (a toggle sets a target state, an edge carries its version);
 * - counts an "overloaded" refusal in `plaudit_object_overloaded_total{object}`
 *   (shared/retries.ts never retries those).
 */
export function counted<T extends object>(env: Env, stub: T, caller: string, object: ObjectLabel, { timeoutMs, clock }: CallDeadline = {}): T {
  const deadline = timeoutMs ?? config(env).OBJECT_CALL_TIMEOUT_MS;
  return new Proxy(stub, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        metrics.count("object_calls_total", { caller, object });
        try {
          const call = Promise.resolve(Reflect.apply(value, target, args));
          const what = `${object}.${String(property)}`;
          return await (clock ? clock.within(call, deadline, what) : withDeadline(call, deadline, what));
        } catch (error) {
          if ((error as { overloaded?: unknown } | null)?.overloaded === true) metrics.count("object_overloaded_total", { object });
          throw error;
        }
      };
    },
  });
}

/** An item's head object. */
export function itemHead(env: Env, item: string, caller: string, deadline?: CallDeadline) {
  return counted(env, env.ITEM_COUNTER.get(env.ITEM_COUNTER.idFromName(itemObjectName(item))), caller, "item_counter", deadline);
}

/** Child `child` of a hot item. */
export function itemShard(env: Env, item: string, child: number, caller: string, deadline?: CallDeadline) {
  return counted(env, env.ITEM_SHARD.get(env.ITEM_SHARD.idFromName(shardObjectName(item, child))), caller, "item_shard", deadline);
}

/** Sends an edge's changes to its home: the head (HEAD) or one of its children. */
export function applyAtHome(env: Env, item: string, home: number, changes: EdgeChange[], caller: string, deadline?: CallDeadline) {
  if (home === HEAD) return itemHead(env, item, caller, deadline).apply(changes);
  return itemShard(env, item, home, caller, deadline).apply(item, home, changes);
}
