import type { ToggleLimits, ToggleResult } from "../../shared/contracts";
import type { ToggleCounter } from "../../shared/counters";
import { DeadlineExceeded } from "../../shared/deadline";
import { log } from "../../shared/log";
import { metrics } from "../../metrics/recorder";
import { d1 } from "../stores/d1";
import { userLikes } from "../lib/objects";

/** A toggle kept while the user's object could not be reached: the target state and when it was asked. */
export type Intent = { user: string; item: string; counter: ToggleCounter; on: boolean; askedAt: number; limits?: ToggleLimits };

type IntentRow = { id: number; user_id: string; item: string; counter: ToggleCounter; target: number; asked_at: number; limits: string | null };

/** Intents applied per cron run, at most. */
const DRAIN_BATCH = 500;

/** The object did not answer in time, or said it is overloaded: the toggle can wait, the user need not. */
export function unreachable(error: unknown): boolean {
  return error instanceof DeadlineExceeded || (error as { overloaded?: unknown } | null)?.overloaded === true;
}

/** Keeps a toggle in the durable buffer (D1, `pending_intents`); the cron applies it later. */
export async function keepIntent(env: Env, intent: Intent): Promise<void> {
  await d1(env, env.DB, "intents").run(
    env.DB.prepare("INSERT INTO pending_intents (user_id, item, counter, target, asked_at, limits) VALUES (?, ?, ?, ?, ?, ?)").bind(
      intent.user,
      intent.item,
      intent.counter,
      intent.on ? 1 : 0,
      intent.askedAt,
      intent.limits ? JSON.stringify(intent.limits) : null,
    ),
  );
  metrics.count("pending_intents_total", { outcome: "kept" });
}

/**
 * Applies the oldest kept intents through the same idempotent call a toggle
 * makes, each with the time it was asked: the user's object applies its
 * limits then, and ignores an intent asked before the user's last action on
 * that edge. A row is deleted once the object answered (applied, refused or
 * superseded); one whose object is still unreachable stays for the next run.
 * A crash between the answer and the delete only applies it again, which
 * changes nothing. Returns how many were settled.
 */
export async function drainIntents(env: Env): Promise<number> {
  const rows = await d1(env, env.DB, "intents").all<IntentRow>(
    env.DB.prepare("SELECT id, user_id, item, counter, target, asked_at, limits FROM pending_intents ORDER BY id LIMIT ?").bind(DRAIN_BATCH),
  );
  const settled: number[] = [];
  for (const row of rows) {
    try {
      const limits = row.limits ? (JSON.parse(row.limits) as ToggleLimits) : undefined;
      const result: ToggleResult = await userLikes(env, row.user_id, "intents").toggle({
        user: row.user_id,
        item: row.item,
        counter: row.counter,
        on: row.target === 1,
        askedAt: row.asked_at,
        ...(limits ? { limits } : {}),
      });
      const outcome = result.kind === "rate_limited" || result.kind === "barred" ? "refused" : result.kind === "superseded" ? "superseded" : "applied";
      metrics.count("pending_intents_total", { outcome });
      settled.push(row.id);
    } catch (error) {
      log("warn", "intent_not_applied", { id: row.id, error: String(error) });
    }
  }
  if (settled.length > 0) {
    await d1(env, env.DB, "intents").run(
      env.DB.prepare("DELETE FROM pending_intents WHERE id IN (SELECT value FROM json_each(?))").bind(JSON.stringify(settled)),
    );
  }
  return settled.length;
}
