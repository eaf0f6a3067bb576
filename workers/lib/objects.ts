import { itemObjectName, userObjectName } from "../../shared/object-names";

export function userLikes(env: Env, userId: string) {
  return env.USER_LIKES.get(env.USER_LIKES.idFromName(userObjectName(userId)));
}

export function itemCounter(env: Env, itemKey: string) {
  return env.ITEM_COUNTER.get(env.ITEM_COUNTER.idFromName(itemObjectName(itemKey)));
}
