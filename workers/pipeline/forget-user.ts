import { scheduleFlush } from "../../metrics/flush";
import { metrics } from "../../metrics/recorder";
import { log } from "../../shared/log";
import { sendToQueue } from "../../durable-objects/lib/queue-send";
import type { ForgetUserRequest } from "../../shared/removal";
import { withRetries } from "../../shared/retries";
import { deleteBlocksOf } from "../stores/blocks";
import { countLayout, layoutDatabases } from "../stores/count-layout";
import { unindexUser } from "../stores/index-walk";
import { deleteIntentsOf } from "../stores/pending-intents";
import { userLikes } from "../lib/objects";
import type { CentralStore } from "../stores/central-store";
import { centralStore } from "../stores/central-tables";
import { clearOwner, ownedSettings, settingsFromRow } from "../stores/item-settings";
import type { RequestMessage } from "./requests";

const CALLER = "forget_user";
/** Central-store edges deleted per message; a larger account sends itself again for the rest. */
const EDGES_PER_MESSAGE = 500;
/** Owned items whose owner one message clears; an owner of more sends itself again for the rest. */
const OWNED_PER_MESSAGE = 500;

/**
 * The last step of an account deletion (shared/removal.ts): the deleted
 * user's rows in the central store (both edge tables), its row in D1's
 * index of users, its blocks, its toggles still in the durable buffer, and
 * its name on the items it owned (docs/privacy.md, "Removing a user": the
 * items keep their visibility and hidden counts with no owner, so a private
 * item stays out of everyone's sight), then the user's object is told, which
 * ends the deletion. Every step deletes what is there, so a request repeated
 * (the object asks again until it hears back) or retried changes nothing
 * more. A large account is wiped over several messages.
 */
export async function answerForgets(env: Env, queue: string, requests: readonly RequestMessage<ForgetUserRequest>[], ctx?: ExecutionContext): Promise<void> {
  let retried = 0;
  for (const { message, request } of requests) {
    try {
      const wiped = await forgetUser(env, request.user);
      // The rest of a large account in a message of its own: a retry would count towards the dead-letter limit.
      if (!wiped) {
        await sendToQueue(env, request.user, [request]);
      }
      message.ack();
    } catch (error) {
      retried++;
      log("error", "forget_user_failed", { error: String(error) });
      message.retry();
    }
  }
  metrics.count("queue_messages_total", { queue, event: "consumed" }, requests.length - retried);
  metrics.count("queue_messages_total", { queue, event: "retried" }, retried);
  if (ctx) scheduleFlush(env, ctx);
}

/** One share of the wipe; true once nothing of the user is left and the object knows. */
async function forgetUser(env: Env, user: string): Promise<boolean> {
  const central = await centralStore(env);
  if (central && (await central.forgetUser(user, EDGES_PER_MESSAGE)) === EDGES_PER_MESSAGE) return false;
  await unindexUser(env, user, CALLER);
  await deleteBlocksOf(env, user, CALLER);
  await deleteIntentsOf(env, user, CALLER);
  if (!(await forgetOwnership(env, user, central))) return false;
  await withRetries(() => userLikes(env, user, CALLER).removalWiped());
  log("info", "user_forgotten", {});
  return true;
}

/**
 * The user's name off the items it owned, in the central store first (a feed
 * over many databases reads settings there, docs/reads.md) and then in D1,
 * whose owner column is what finds the items: so an item whose central write
 * failed is found again on the retry. Both writes carry the same time, only
 * if newer. True once no item of the user's is left.
 */
async function forgetOwnership(env: Env, user: string, central: CentralStore | null): Promise<boolean> {
  let done = true;
  for (const db of layoutDatabases(env, await countLayout(env))) {
    const rows = await ownedSettings(env, db, user, OWNED_PER_MESSAGE, CALLER);
    if (rows.length === 0) continue;
    const now = Date.now();
    for (const row of rows) await central?.writeSettings(`${row.item_type}:${row.item_id}`, { ...settingsFromRow(row), owner: null }, now);
    await clearOwner(env, db, user, rows, now, CALLER);
    if (rows.length === OWNED_PER_MESSAGE) done = false;
  }
  return done;
}
