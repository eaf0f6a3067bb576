import { CircuitBreaker } from "../../shared/circuit-breaker";
import { config } from "../../shared/config";
import { withDeadline } from "../../shared/deadline";
import { log } from "../../shared/log";
import { withRetries } from "../../shared/retries";
import { metrics } from "../../metrics/recorder";

/**
 * What a breaker guards: one endpoint of a dependency (a D1 database by its
 * binding, the central store by its URL). Keyed by endpoint, so calls to
 * another endpoint of the same dependency (another store, a store that is
 * down) never open the breaker of this one.
 */
export type Endpoint = { dependency: string; endpoint: string };

/** Per isolate, one breaker per endpoint. */
const breakers = new Map<string, CircuitBreaker>();

/** The breaker of one endpoint; its state is the gauge `plaudit_circuit_breaker_open{dependency, endpoint}`. */
export function breakerFor(env: Env, { dependency, endpoint }: Endpoint): CircuitBreaker {
  const key = `${dependency} ${endpoint}`;
  let breaker = breakers.get(key);
  if (!breaker) {
    const settings = config(env);
    breaker = new CircuitBreaker(key, {
      failures: settings.BREAKER_FAILURES,
      openMs: settings.BREAKER_OPEN_MS,
      onChange: (state) => {
        metrics.gauge("circuit_breaker_open", { dependency, endpoint }, state === "open" ? 1 : 0);
        log(state === "open" ? "warn" : "info", "circuit_breaker", { dependency, endpoint, state });
      },
    });
    breakers.set(key, breaker);
  }
  return breaker;
}

/**
 * One call to a store: each attempt bounded by `timeoutMs` and made through
 * the store's breaker, retried (jittered) only when the error is retryable.
 * An open breaker refuses at once and is not retried, so a store that is down
 * costs neither its timeouts nor its load on every message.
 */
export async function guarded<T>(env: Env, target: Endpoint, timeoutMs: number, work: () => Promise<T>, attempts = 3): Promise<T> {
  const breaker = breakerFor(env, target);
  return await withRetries(() => breaker.call(() => withDeadline(work(), timeoutMs, target.dependency)), attempts);
}

/** Test hook: every breaker forgotten (closed again) between scenarios. */
export function resetBreakers(): void {
  breakers.clear();
}
