// `npm run token -- <user_id> [--service] [--ttl SECONDS] [--followers-of ID,ID]`:
// prints a signed token for local use, with the first secret of AUTH_SECRET
// (environment, else .dev.vars). With --followers-of it is a grant for the
// X-Plaudit-Grant header (docs/privacy.md): give it a --ttl within GRANT_MAX_SECONDS.
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { isCanonicalU64 } from "../shared/ids";
import { signJwt } from "../shared/jwt";
// @ts-expect-error: a plain ES module shared with scripts/start.mjs
import { readDevVars } from "./dev-vars.mjs";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    service: { type: "boolean", default: false },
    ttl: { type: "string", default: "86400" },
    "followers-of": { type: "string" },
  },
});
const [userId] = positionals;
if (!userId || !isCanonicalU64(userId)) {
  console.error("usage: npm run token -- <user_id> [--service] [--ttl SECONDS] [--followers-of ID,ID]   (ids: canonical uint64s, e.g. 42)");
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
const owners = values["followers-of"]?.split(",").map((id) => id.trim());
if (owners && !owners.every(isCanonicalU64)) {
  console.error("--followers-of must be comma-separated canonical uint64 ids");
  process.exit(2);
}
const claims = {
  sub: userId,
  exp: Math.floor(Date.now() / 1000) + ttl,
  ...(values.service ? { role: "service" } : {}),
  ...(owners ? { followers_of: owners } : {}),
};
console.log(await signJwt(claims, secret));
