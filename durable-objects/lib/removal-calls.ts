import { config } from "../../shared/config";
import type { ToggleCounter } from "../../shared/counters";
import { withDeadline } from "../../shared/deadline";
import { eventQueueFor } from "../../shared/event-queue-for";
import { itemObjectName, shardObjectName } from "../../shared/object-names";
import { HEAD } from "../../shared/placement";
import type { ForgetUserRequest } from "../../shared/removal";
import { metrics } from "../../metrics/recorder";
import { countCall } from "./metered-storage";

// A removal's calls out of the user's object (lib/removal.ts).

/** Asks an edge's home, and the head when a child holds it, to drop its row for the user; true once every one has. */
export async function forgetAtHomes(env: Env, user: string, item: string, counter: ToggleCounter, home: number): Promise<boolean> {
  const homes = home === HEAD ? [HEAD] : [home, HEAD];
  const answers = await Promise.all(
    homes.map((at) => {
      countCall("user_likes", at === HEAD ? "item_counter" : "item_shard");
      if (at === HEAD) return env.ITEM_COUNTER.get(env.ITEM_COUNTER.idFromName(itemObjectName(item))).forget(user, counter);
      return env.ITEM_SHARD.get(env.ITEM_SHARD.idFromName(shardObjectName(item, at))).forget(user, counter);
    }),
  );
  return answers.every(Boolean);
}

/** Asks the Worker to wipe the user's rows in the central store and D1 (workers/pipeline/forget-user.ts), which then calls removalWiped. */
export async function requestWipe(env: Env, user: string): Promise<void> {
  const { queue, name } = eventQueueFor(env, user);
  const body: ForgetUserRequest = { v: 1, kind: "forget_user", user };
  await withDeadline(queue.send(body, { contentType: "json" }), config(env).QUEUE_SEND_TIMEOUT_MS, "queue send");
  metrics.count("queue_messages_total", { queue: name, event: "sent" });
}
