import type { ToggleCounter } from "../../shared/counters";
import type { DeadlineClock } from "../../shared/deadline";
import { HEAD } from "../../shared/placement";
import type { ForgetUserRequest } from "../../shared/removal";
import { itemHead, itemShard } from "./object-calls";
import { sendToQueue } from "./queue-send";

// A removal's calls out of the user's object (lib/removal.ts).

/** Asks an edge's home, and the head when a child holds it, to drop its row for the user; true once every one has. */
export async function forgetAtHomes(env: Env, clock: DeadlineClock, user: string, item: string, counter: ToggleCounter, home: number): Promise<boolean> {
  const homes = home === HEAD ? [HEAD] : [home, HEAD];
  const deadline = { clock };
  const answers = await Promise.all(
    homes.map((at) => (at === HEAD ? itemHead(env, item, "user_likes", deadline) : itemShard(env, item, at, "user_likes", deadline)).forget(user, counter)),
  );
  return answers.every(Boolean);
}

/** Asks the Worker to wipe the user's rows in the central store and D1 (workers/pipeline/forget-user.ts), which then calls removalWiped. */
export async function requestWipe(env: Env, user: string): Promise<void> {
  const body: ForgetUserRequest = { v: 1, kind: "forget_user", user };
  await sendToQueue(env, user, [body]);
}
