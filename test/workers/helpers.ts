import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { signJwt } from "../../shared/jwt";
import worker from "../../workers/index";

export const SECRETS = ["test-secret-primary", "test-secret-rotated"] as const;

// Files run side by side and share their project's central store: each
// starts at a random point of [10^15, 9 * 10^15): two files of 10,000 ids
// each meet with odds of 2.5 * 10^-12. Below 2^53, an id is exact as a JSON number too.
let nextId = 10n ** 15n + BigInt(Math.floor(Math.random() * 8e15));

/**
 * A fresh id for every user and item a test touches: storage is shared by all
 * tests of a file, so no two tests may meet on one object.
 */
export function freshId(): string {
  nextId += 1n;
  return nextId.toString();
}

export async function tokenFor(
  userId: string,
  options: { role?: string; expiresIn?: number; secret?: string; claims?: Record<string, unknown> } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return signJwt(
    { sub: userId, exp: now + (options.expiresIn ?? 3600), ...(options.role ? { role: options.role } : {}), ...options.claims },
    options.secret ?? SECRETS[0],
  );
}

/**
 * Calls the real Worker's fetch handler in this isolate, with the real
 * bindings. Not through SELF/exports.default: in this pool version every
 * request through that loopback makes the next one slower (per-request cost
 * grows with the number of requests already made; workers-sdk issue 15446).
 */
export function fetchWorker(request: Request, bindings: Env = env): Promise<Response> {
  return Promise.resolve(worker.fetch(request, bindings, createExecutionContext()));
}

/** `env` is another configuration of the same bindings (see withVars in idp.ts). */
type CallOptions = { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string>; env?: Env; cf?: IncomingRequestCfProperties };

export async function call(method: string, path: string, options: CallOptions = {}): Promise<Response> {
  const headers = new Headers(options.headers);
  if (options.token) headers.set("authorization", `Bearer ${options.token}`);
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
  }
  const request = new Request(`http://plaudit.test${path}`, { method, headers, body, ...(options.cf ? { cf: options.cf } : {}) });
  return fetchWorker(request, options.env);
}

export async function json<T = any>(response: Response): Promise<T> {
  return (await response.json()) as T;
}

/** A user with a token, ready to like. */
export async function newUser(): Promise<{ id: string; token: string }> {
  const id = freshId();
  return { id, token: await tokenFor(id) };
}

/** `grant`: the host app's X-Plaudit-Grant (docs/privacy.md). */
export const like = (token: string, item_id: string, item_type = "post", grant?: string) =>
  call("POST", "/v1/like", { token, body: { item_id, item_type }, ...(grant ? { headers: { "x-plaudit-grant": grant } } : {}) });

export const unlike = (token: string, item_id: string, item_type = "post") =>
  call("DELETE", "/v1/like", { token, body: { item_id, item_type } });

export async function countOf(item_id: string, item_type = "post"): Promise<number> {
  const res = await call("GET", `/v1/count?item_id=${item_id}&item_type=${item_type}`);
  return (await json(res)).counts.likes;
}
