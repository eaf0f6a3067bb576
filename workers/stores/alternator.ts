import { AwsClient } from "aws4fetch";
import type { CircuitBreaker } from "../../shared/circuit-breaker";
import { DeadlineExceeded } from "../../shared/deadline";
import { metrics } from "../../metrics/recorder";

/**
 * A DynamoDB-API client for ScyllaDB's Alternator, signed with SigV4. Only
 * the few calls plaudit makes; errors keep the API's error type so callers
 * can tell "the store already holds something newer" from a failure.
 */
export class AlternatorError extends Error {
  readonly retryable: boolean;

  constructor(
    readonly type: string,
    readonly status: number,
    message: string,
  ) {
    super(`${type}: ${message}`);
    this.retryable = status === 0 || status >= 500 || /Throttling|ProvisionedThroughputExceeded|RequestLimitExceeded/.test(type);
  }

  get conditionFailed(): boolean {
    return this.type === "ConditionalCheckFailedException";
  }
}

export type AlternatorConfig = { endpoint: string; region: string; accessKeyId: string; secretAccessKey: string; timeoutMs: number };

export class Alternator {
  readonly #client: AwsClient;

  /** With a breaker, every call, table checks included, goes through it. */
  constructor(
    private readonly config: AlternatorConfig,
    private readonly breaker?: CircuitBreaker,
  ) {
    // Retries are the caller's (shared/retries.ts) and the queue's, never the signer's.
    this.#client = new AwsClient({
      accessKeyId: config.accessKeyId,
      secretAccessKey: config.secretAccessKey,
      region: config.region,
      service: "dynamodb",
      retries: 0,
    });
  }

  async call<T = Record<string, unknown>>(operation: string, body: unknown): Promise<T> {
    if (!this.breaker) return await this.#call<T>(operation, body);
    // An answer the store chose (a failed condition, a bad request) is the store working: only the rest trips the breaker.
    const outcome = await this.breaker.call(async () => {
      try {
        return { answer: await this.#call<T>(operation, body) };
      } catch (error) {
        if (error instanceof AlternatorError && !error.retryable) return { refusal: error };
        throw error;
      }
    });
    if ("refusal" in outcome) throw outcome.refusal;
    return outcome.answer;
  }

  /**
   * Every request sent to the store is counted by operation (Scan, Query,
   * GetItem, BatchGetItem, UpdateItem, ...) and outcome: `ok`, `refused`
   * (the store answered with an error of its own, a failed condition
   * included) or `failed` (no answer, a timeout, a server error). A call an
   * open breaker refused is never sent, so it is not counted here.
   */
  async #call<T>(operation: string, body: unknown): Promise<T> {
    try {
      const answer = await this.#send<T>(operation, body);
      metrics.count("central_store_calls_total", { operation, outcome: "ok" });
      return answer;
    } catch (error) {
      const refused = error instanceof AlternatorError && !error.retryable;
      metrics.count("central_store_calls_total", { operation, outcome: refused ? "refused" : "failed" });
      throw error;
    }
  }

  async #send<T>(operation: string, body: unknown): Promise<T> {
    // The signal bounds the whole exchange, the body included: a store that accepts and never answers is cut off.
    const signal = AbortSignal.timeout(this.config.timeoutMs);
    let text: string;
    let response: Response;
    try {
      response = await this.#client.fetch(this.config.endpoint, {
        method: "POST",
        headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": `DynamoDB_20120810.${operation}` },
        body: JSON.stringify(body),
        signal,
      });
      // Alternator answers with application/x-amz-json-1.0, which the runtime does not treat as text.
      text = new TextDecoder().decode(await response.arrayBuffer());
    } catch (error) {
      if (signal.aborted) throw new DeadlineExceeded(`central store ${operation}`, this.config.timeoutMs);
      // A pooled connection the server had already closed fails like this; every call here is safe to repeat.
      throw new AlternatorError("NetworkError", 0, String(error));
    }
    const parsed = text === "" ? {} : (JSON.parse(text) as Record<string, unknown>);
    if (!response.ok) {
      const type = String(parsed.__type ?? "UnknownError").split("#").pop()!;
      throw new AlternatorError(type, response.status, String(parsed.message ?? parsed.Message ?? response.statusText));
    }
    return parsed as T;
  }
}
