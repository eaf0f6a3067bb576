import { userObjectName } from "../../shared/object-names";
import { counted } from "../../durable-objects/lib/object-calls";

export { itemHead as itemCounter } from "../../durable-objects/lib/object-calls";

export function userLikes(env: Env, userId: string, caller: string) {
  return counted(env, env.USER_LIKES.get(env.USER_LIKES.idFromName(userObjectName(userId))), caller, "user_likes");
}

/** Live hub `n` of the LIVE_HUBS that hold the live sockets. */
export function liveHub(env: Env, n: number, caller: string) {
  return counted(env, env.LIVE_HUB.get(env.LIVE_HUB.idFromName(`hub:${n}`)), caller, "live_hub");
}
