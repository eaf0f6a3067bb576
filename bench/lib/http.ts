// A small keep-alive HTTP client over node:http: `connections` bounds the
// sockets, so the load generator's concurrency is what it says.
import { Agent, request } from "node:http";

export type HttpResult = {
  /** 0 when no answer came (connection refused or reset, timeout). */
  status: number;
  body: unknown;
  ms: number;
  error?: string;
};

export type RequestOptions = { token?: string; body?: unknown; timeoutMs?: number };

export class HttpClient {
  readonly #base: URL;
  readonly #agent: Agent;

  constructor(baseUrl: string, connections: number) {
    this.#base = new URL(baseUrl);
    this.#agent = new Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections });
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<HttpResult> {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    const headers: Record<string, string> = {};
    if (payload !== undefined) {
      headers["content-type"] = "application/json";
      headers["content-length"] = String(Buffer.byteLength(payload));
    }
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    const started = performance.now();
    return await new Promise<HttpResult>((resolve) => {
      const done = (status: number, body: unknown, error?: string) =>
        resolve({ status, body, ms: performance.now() - started, ...(error ? { error } : {}) });
      const req = request(
        { host: this.#base.hostname, port: this.#base.port, path, method, headers, agent: this.#agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("error", (e) => done(0, null, e.message));
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let body: unknown = text;
            try {
              body = text === "" ? null : JSON.parse(text);
            } catch {
              // Kept as text: a non-JSON answer is itself worth reporting.
            }
            done(res.statusCode ?? 0, body);
          });
        },
      );
      req.setTimeout(options.timeoutMs ?? 30_000, () => req.destroy(new Error("request timed out")));
      req.on("error", (e) => done(0, null, e.message));
      req.end(payload);
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}
