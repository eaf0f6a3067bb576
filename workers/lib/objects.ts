import { itemObjectName, userObjectName } from "../../shared/object-names";

export function userLikes(env: Env, userId: string) {
  return env.USER_LIKES.get(env.USER_LIKES.idFromName(userObjectName(userId)));
}

export function itemCounter(env: Env, itemKey: string) {
  return env.ITEM_COUNTER.get(env.ITEM_COUNTER.idFromName(itemObjectName(itemKey)));
}

/** Live hub `n` of the LIVE_HUBS that hold the live sockets. */
export function liveHub(env: Env, n: number) {
  return env.LIVE_HUB.get(env.LIVE_HUB.idFromName(`hub:${n}`));
}
