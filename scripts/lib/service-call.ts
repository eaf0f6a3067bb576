// The command-line tools' calls to plaudit's service endpoints, and the token they sign for it.
import { resolve } from "node:path";
import { signJwt } from "../../shared/jwt";
// @ts-expect-error: a plain ES module shared with scripts/start.mjs
import { readDevVars } from "../dev-vars.mjs";

const MAX_ATTEMPTS = 8;

/** A week-long service token signed with AUTH_SECRET (the environment's, else the first of .dev.vars); null when there is none. */
export async function serviceToken(): Promise<string | null> {
  const secrets = process.env.AUTH_SECRET ?? readDevVars(resolve(process.env.PLAUDIT_DEV_VARS ?? ".dev.vars")).AUTH_SECRET ?? "";
  const secret = String(secrets).split(",")[0]?.trim();
  if (!secret) return null;
  return await signJwt({ sub: "0", role: "service", exp: Math.floor(Date.now() / 1000) + 7 * 86_400 }, secret);
}

/** The service token, or the run ends with what to do when there is no AUTH_SECRET. */
export async function serviceTokenOrExit(): Promise<string> {
  const token = await serviceToken();
  if (token) return token;
  console.error("No AUTH_SECRET: run `npm start` once (it creates .dev.vars) or set AUTH_SECRET.");
  process.exit(1);
}

/**
 * POSTs JSON to a service endpoint and answers its JSON. A 429 or 503 (or no
 * answer at all) waits its Retry-After, or a growing backoff, and tries
 * again; any other refusal ends the run with the service's message.
 */
export async function postService<T>(url: string, path: string, token: string, body: unknown): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    let response: Response | null = null;
    try {
      response = await fetch(`${url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    } catch (error) {
      if (attempt >= MAX_ATTEMPTS) throw error;
    }
    if (response?.ok) return (await response.json()) as T;
    if (response && response.status !== 429 && response.status !== 503) {
      throw new Error(`the service refused the call: ${response.status} ${await response.text()}`);
    }
    if (attempt >= MAX_ATTEMPTS) throw new Error(`the service stayed unavailable after ${attempt} attempts`);
    const retryAfter = Number(response?.headers.get("retry-after"));
    const waitMs = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1_000 : Math.min(30_000, 250 * 2 ** attempt);
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
}
