import { metrics } from "../../metrics/recorder";
import { itemObjectName, userObjectName } from "../../shared/object-names";

/** The label each object class carries in `plaudit_object_calls_total`. */
export type ObjectLabel = "user_likes" | "item_counter" | "item_shard" | "live_hub";

/**
 * Wraps a stub so that every method called through it (an RPC call, or
 * fetch) counts once in `plaudit_object_calls_total{caller,object}`: every
 * object call the Worker makes is made through here, so the counter is the
 * cost of a route in object requests, the unit Cloudflare bills.
 */
export function counted<T extends object>(stub: T, caller: string, object: ObjectLabel): T {
  return new Proxy(stub, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        metrics.count("object_calls_total", { caller, object });
        return Reflect.apply(value, target, args);
      };
    },
  });
}

export function userLikes(env: Env, userId: string, caller: string) {
  return counted(env.USER_LIKES.get(env.USER_LIKES.idFromName(userObjectName(userId))), caller, "user_likes");
}

export function itemCounter(env: Env, itemKey: string, caller: string) {
  return counted(env.ITEM_COUNTER.get(env.ITEM_COUNTER.idFromName(itemObjectName(itemKey))), caller, "item_counter");
}

/** Live hub `n` of the LIVE_HUBS that hold the live sockets. */
export function liveHub(env: Env, n: number, caller: string) {
  return counted(env.LIVE_HUB.get(env.LIVE_HUB.idFromName(`hub:${n}`)), caller, "live_hub");
}
