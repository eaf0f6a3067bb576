import { metrics } from "../../metrics/recorder";
import { config } from "../../shared/config";
import { withDeadline } from "../../shared/deadline";
import { itemObjectName, userObjectName } from "../../shared/object-names";

/** The label each object class carries in `plaudit_object_calls_total`. */
export type ObjectLabel = "user_likes" | "item_counter" | "item_shard" | "live_hub";

/**
 * Wraps a stub so that every method called through it (an RPC call, or
 * fetch):
 * - counts once in `plaudit_object_calls_total{caller,object}`: every object
 *   call the Worker makes is made through here, so the counter is the cost of
 *   a route in object requests, the unit Cloudflare bills;
 * - has a deadline (OBJECT_CALL_TIMEOUT_MS): a hung object must not hang the
 *   request; the call is not cancelled, which is safe because every object
 *   method is idempotent (a toggle sets a target state);
 * - counts an "overloaded" refusal in `plaudit_object_overloaded_total{object}`
 *   (shared/retries.ts never retries those).
 */
export function counted<T extends object>(env: Env, stub: T, caller: string, object: ObjectLabel): T {
  const timeoutMs = config(env).OBJECT_CALL_TIMEOUT_MS;
  return new Proxy(stub, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        metrics.count("object_calls_total", { caller, object });
        try {
          return await withDeadline(Promise.resolve(Reflect.apply(value, target, args)), timeoutMs, `${object}.${String(property)}`);
        } catch (error) {
          if ((error as { overloaded?: unknown } | null)?.overloaded === true) metrics.count("object_overloaded_total", { object });
          throw error;
        }
      };
    },
  });
}

export function userLikes(env: Env, userId: string, caller: string) {
  return counted(env, env.USER_LIKES.get(env.USER_LIKES.idFromName(userObjectName(userId))), caller, "user_likes");
}

export function itemCounter(env: Env, itemKey: string, caller: string) {
  return counted(env, env.ITEM_COUNTER.get(env.ITEM_COUNTER.idFromName(itemObjectName(itemKey))), caller, "item_counter");
}

/** Live hub `n` of the LIVE_HUBS that hold the live sockets. */
export function liveHub(env: Env, n: number, caller: string) {
  return counted(env, env.LIVE_HUB.get(env.LIVE_HUB.idFromName(`hub:${n}`)), caller, "live_hub");
}
