import { CircuitBreaker } from "../../shared/circuit-breaker";
import { config } from "../../shared/config";
import { withDeadline } from "../../shared/deadline";
import { log } from "../../shared/log";
import { withRetries } from "../../shared/retries";
import { metrics } from "../../metrics/recorder";

/** Per isolate, one breaker per store (each D1 database, the central store). */
const breakers = new Map<string, CircuitBreaker>();

/** The breaker of one dependency; its state is the gauge `plaudit_circuit_breaker_open{dependency}`. */
export function breakerFor(env: Env, dependency: string): CircuitBreaker {
  let breaker = breakers.get(dependency);
  if (!breaker) {
    const settings = config(env);
    breaker = new CircuitBreaker(dependency, {
      failures: settings.BREAKER_FAILURES,
      openMs: settings.BREAKER_OPEN_MS,
      onChange: (state) => {
        metrics.gauge("circuit_breaker_open", { dependency }, state === "open" ? 1 : 0);
        log(state === "open" ? "warn" : "info", "circuit_breaker", { dependency, state });
      },
    });
    breakers.set(dependency, breaker);
  }
  return breaker;
}

/**
 * One call to a store: each attempt bounded by `timeoutMs` and made through
 * the store's breaker, retried (jittered) only when the error is retryable.
 * An open breaker refuses at once and is not retried, so a store that is down
 * costs neither its timeouts nor its load on every message.
 */
export async function guarded<T>(env: Env, dependency: string, timeoutMs: number, work: () => Promise<T>, attempts = 3): Promise<T> {
  const breaker = breakerFor(env, dependency);
  return await withRetries(() => breaker.call(() => withDeadline(work(), timeoutMs, dependency)), attempts);
}

/** Test hook: every breaker forgotten (closed again) between scenarios. */
export function resetBreakers(): void {
  breakers.clear();
}
