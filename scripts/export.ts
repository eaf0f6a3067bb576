// `npm run export -- --from 2026-11-01 --to 2026-12-01 [--out FILE] [--salts FILE]
//   [--endpoint URL] [--prefix plaudit_] [--url http://127.0.0.1:8787]`:
// the pseudonymized export for analytics (docs/privacy.md, "Exports").
// Every edge liked in [from, to) from the central store, its user id
// replaced by an HMAC under this month's salt, then (with --url) each
// exported item's likes per day from GET /v1/history, as NDJSON.
import { createWriteStream, existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { MAX_HISTORY_DAYS } from "../shared/schemas";
import { currentSalt, exportEdges } from "./lib/export";

const DAY_MS = 86_400_000;

/** The central store `npm start` embeds, while it runs (scripts/start.mjs writes where it listens). */
function embeddedEndpoint(): string | undefined {
  const file = join(resolve(process.env.PLAUDIT_STATE_DIR ?? ".wrangler/state"), "central-store.url");
  return existsSync(file) ? readFileSync(file, "utf8").trim() : undefined;
}

const { values } = parseArgs({
  options: {
    from: { type: "string" },
    to: { type: "string" },
    out: { type: "string" },
    salts: { type: "string", default: ".export-salts.json" },
    endpoint: { type: "string", default: process.env.ALTERNATOR_ENDPOINT ?? embeddedEndpoint() },
    prefix: { type: "string", default: process.env.ALTERNATOR_TABLE_PREFIX ?? "plaudit_" },
    region: { type: "string", default: process.env.ALTERNATOR_REGION ?? "us-east-1" },
    url: { type: "string" },
  },
});

const day = (text: string | undefined) => (text && /^\d{4}-\d{2}-\d{2}$/.test(text) ? Date.parse(`${text}T00:00:00Z`) : NaN);
const from = day(values.from);
const to = day(values.to);
if (!Number.isFinite(from) || !Number.isFinite(to) || to <= from || !values.endpoint) {
  console.error(
    "usage: npm run export -- --from YYYY-MM-DD --to YYYY-MM-DD (exclusive) --endpoint URL (or ALTERNATOR_ENDPOINT, else the central store `npm start` runs) [--prefix plaudit_] [--out FILE] [--salts FILE] [--url PLAUDIT_URL]",
  );
  process.exit(2);
}

const out = values.out ? createWriteStream(values.out) : process.stdout;
const line = (record: unknown) => out.write(`${JSON.stringify(record)}\n`);
const { period, salt, destroyed } = currentSalt(values.salts!, Date.now());
if (destroyed.length > 0) console.error(`destroyed the salts of ${destroyed.join(", ")}: older exports can no longer be joined to this one`);

const items = new Set<string>();
let edges = 0;
try {
  edges = await exportEdges(
    {
      endpoint: values.endpoint,
      prefix: values.prefix!,
      region: values.region!,
      accessKeyId: process.env.ALTERNATOR_ACCESS_KEY_ID ?? "plaudit",
      secretAccessKey: process.env.ALTERNATOR_SECRET_ACCESS_KEY ?? "plaudit",
    },
    { from, to },
    salt,
    (edge) => {
      line(edge);
      items.add(`${edge.item_type}:${edge.item_id}`);
      if (++edges % 10_000 === 0) process.stderr.write(`\r${edges} edges`);
    },
  );
} catch (error) {
  console.error(`\nThe export stopped: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}

// Likes per item per day identify no one: the history's daily differences, for the exported items. Read without a
// token, so they follow the items' privacy: an item only its owner may see reads as untouched, hidden counts as null,
// and neither gives a line.
let daily = 0;
if (values.url) {
  const days = Math.min(MAX_HISTORY_DAYS, Math.ceil((Date.now() - from) / DAY_MS));
  for (const item of items) {
    const [itemType, itemId] = item.split(":");
    const response = await fetch(`${values.url.replace(/\/$/, "")}/v1/history?item_id=${itemId}&item_type=${itemType}&days=${days}`);
    if (!response.ok) {
      console.error(`\nthe history of ${item} could not be read: ${response.status}`);
      process.exit(1);
    }
    const { days: rows } = (await response.json()) as { days: { date: string; likes: number | null }[] };
    for (const row of rows) {
      const at = Date.parse(`${row.date}T00:00:00Z`);
      if (at >= from && at < to && row.likes !== 0 && row.likes !== null) line({ kind: "daily", item_type: itemType, item_id: itemId, date: row.date, likes: row.likes }) && daily++;
    }
  }
}
await new Promise<void>((resolve) => (out === process.stdout ? resolve() : out.end(resolve)));
console.error(`\n${edges} edges${values.url ? `, ${daily} item-days` : ""} exported under the salt of ${period}${values.out ? ` to ${values.out}` : ""}`);
