// `npm run token -- <user_id> [--service] [--ttl SECONDS]`: prints a signed
// token for local use, with the first secret of AUTH_SECRET (environment, else .dev.vars).
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { isCanonicalU64 } from "../shared/ids";
import { signJwt } from "../shared/jwt";
// @ts-expect-error: a plain ES module shared with scripts/start.mjs
import { readDevVars } from "./dev-vars.mjs";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { service: { type: "boolean", default: false }, ttl: { type: "string", default: "86400" } },
});
const [userId] = positionals;
if (!userId || !isCanonicalU64(userId)) {
  console.error("usage: npm run token -- <user_id> [--service] [--ttl SECONDS]   (user_id: a canonical uint64, e.g. 42)");
  process.exit(2);
}
const ttl = Number(values.ttl);
if (!Number.isInteger(ttl) || ttl <= 0) {
  console.error("--ttl must be a positive whole number of seconds");
  process.exit(2);
}
const secrets: string =
  process.env.AUTH_SECRET ?? readDevVars(resolve(process.env.PLAUDIT_DEV_VARS ?? ".dev.vars")).AUTH_SECRET ?? "";
const secret = secrets.split(",")[0]?.trim();
if (!secret) {
  console.error("No AUTH_SECRET: run `npm start` once (it creates .dev.vars) or set AUTH_SECRET.");
  process.exit(1);
}
const claims = { sub: userId, exp: Math.floor(Date.now() / 1000) + ttl, ...(values.service ? { role: "service" } : {}) };
console.log(await signJwt(claims, secret));
