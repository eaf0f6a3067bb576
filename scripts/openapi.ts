// `npm run openapi`: writes docs/openapi.json, the same document the Worker
// serves at GET /openapi.json. test/workers/openapi.test.ts fails while the
// committed file differs from what the Worker serves.
import { writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { openApiDocument } from "../workers/openapi/document";

const target = resolve(dirname(fileURLToPath(import.meta.url)), "..", "docs", "openapi.json");
writeFileSync(target, `${JSON.stringify(openApiDocument(), null, 2)}\n`);
console.log(`Wrote ${target}`);
