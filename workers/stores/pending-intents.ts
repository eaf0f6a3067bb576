import type { ToggleLimits } from "../../shared/contracts";
import type { ToggleCounter } from "../../shared/counters";
import { d1 } from "./d1";

/** A kept toggle, as `pending_intents` holds it. */
export type IntentRow = { id: number; item: string; counter: ToggleCounter; target: number; asked_at: number; limits: string | null };

/** The intent to store: the target state and when it was asked. */
export type NewIntent = { user: string; item: string; counter: ToggleCounter; on: boolean; askedAt: number; limits?: ToggleLimits };

const CALLER = "intents";

export async function insertIntent(env: Env, intent: NewIntent): Promise<void> {
  await d1(env, env.DB, CALLER).run(
    env.DB.prepare("INSERT INTO pending_intents (user_id, item, counter, target, asked_at, limits) VALUES (?, ?, ?, ?, ?, ?)").bind(
      intent.user,
      intent.item,
      intent.counter,
      intent.on ? 1 : 0,
      intent.askedAt,
      intent.limits ? JSON.stringify(intent.limits) : null,
    ),
  );
}

/** A user's oldest `limit` intents, oldest first. */
export async function intentsOf(env: Env, user: string, limit: number): Promise<IntentRow[]> {
  return await d1(env, env.DB, CALLER).all<IntentRow>(
    env.DB.prepare("SELECT id, item, counter, target, asked_at, limits FROM pending_intents WHERE user_id = ? ORDER BY id LIMIT ?").bind(user, limit),
  );
}

/** A user's oldest `limit` intents for one counter, oldest first: what read-your-writes overlays. */
export async function intentsFor(env: Env, user: string, counter: ToggleCounter, limit: number): Promise<Pick<IntentRow, "item" | "target" | "asked_at">[]> {
  return await d1(env, env.DB, CALLER).all<Pick<IntentRow, "item" | "target" | "asked_at">>(
    env.DB.prepare("SELECT item, target, asked_at FROM pending_intents WHERE user_id = ? AND counter = ? ORDER BY id LIMIT ?").bind(user, counter, limit),
  );
}

export async function deleteIntents(env: Env, ids: readonly number[]): Promise<void> {
  await d1(env, env.DB, CALLER).run(env.DB.prepare("DELETE FROM pending_intents WHERE id IN (SELECT value FROM json_each(?))").bind(JSON.stringify(ids)));
}

/** Up to `limit` users with kept intents. */
export async function usersWithIntents(env: Env, limit: number): Promise<string[]> {
  const rows = await d1(env, env.DB, CALLER).all<{ user_id: string }>(env.DB.prepare("SELECT DISTINCT user_id FROM pending_intents LIMIT ?").bind(limit));
  return rows.map((row) => row.user_id);
}

/** Every intent a user kept (an account deletion). */
export async function deleteIntentsOf(env: Env, user: string, caller: string): Promise<void> {
  await d1(env, env.DB, caller).run(env.DB.prepare("DELETE FROM pending_intents WHERE user_id = ?").bind(user));
}
