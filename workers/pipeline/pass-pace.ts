import { config } from "../../shared/config";
import type { Pass } from "../stores/passes";
import type { StepWork } from "./pass-work";

/** The longest a queue message may be delayed. */
const MAX_DELAY_SECONDS = 43_200;

/**
 * How long a range waits before its next step, so that the pass keeps its
 * own pace (a reconciliation pass: its items a second, shared by the ranges
 * in flight) and asks no store more than its limit: PASS_D1_QUERIES_PER_SECOND
 * of a database, counted as if every query of the step went to one database
 * (its range's state is in `DB`, which every range shares, so each gets
 * 1/concurrency of it), and PASS_CENTRAL_KEYS_PER_SECOND keys read or
 * written in the central store, shared the same way. The time the step took counts towards it.
 */
export function paceSeconds(env: Env, plan: Pass, work: StepWork, tookSeconds: number): number {
  const settings = config(env);
  const share = (perSecond: number) => perSecond / plan.concurrency;
  const wanted = Math.max(
    plan.items_per_second > 0 ? work.visited / share(plan.items_per_second) : 0,
    work.d1Queries / share(settings.PASS_D1_QUERIES_PER_SECOND),
    work.centralKeys / share(settings.PASS_CENTRAL_KEYS_PER_SECOND),
  );
  return Math.min(MAX_DELAY_SECONDS, Math.max(0, wanted - tookSeconds));
}
