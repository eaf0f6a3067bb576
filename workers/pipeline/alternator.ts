import { AwsClient } from "aws4fetch";

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

export type AlternatorConfig = { endpoint: string; region: string; accessKeyId: string; secretAccessKey: string };

export class Alternator {
  readonly #client: AwsClient;

  constructor(private readonly config: AlternatorConfig) {
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
    let response: Response;
    try {
      response = await this.#client.fetch(this.config.endpoint, {
        method: "POST",
        headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": `DynamoDB_20120810.${operation}` },
        body: JSON.stringify(body),
      });
    } catch (error) {
      // A pooled connection the server had already closed fails like this; every call here is safe to repeat.
      throw new AlternatorError("NetworkError", 0, String(error));
    }
    // Alternator answers with application/x-amz-json-1.0, which the runtime does not treat as text.
    const text = new TextDecoder().decode(await response.arrayBuffer());
    const parsed = text === "" ? {} : (JSON.parse(text) as Record<string, unknown>);
    if (!response.ok) {
      const type = String(parsed.__type ?? "UnknownError").split("#").pop()!;
      throw new AlternatorError(type, response.status, String(parsed.message ?? parsed.Message ?? response.statusText));
    }
    return parsed as T;
  }
}
