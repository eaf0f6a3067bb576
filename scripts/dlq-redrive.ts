// `npm run dlq:redrive`: moves the messages in the dead-letter queue back to
// the events queue, through the Cloudflare API (the DLQ has an HTTP pull
// consumer: `npx wrangler queues consumer http add plaudit-events-dlq`, once).
// A message is acknowledged in the DLQ only after it was pushed back, so a
// failure half-way leaves it there (it reappears after the lease expires).
//
// Environment: CLOUDFLARE_ACCOUNT_ID, CLOUDFLARE_API_TOKEN (Queues Edit).
// Arguments: [--dry-run] [--max N] [--from plaudit-events-dlq] [--to plaudit-events]
import { parseArgs } from "node:util";

const API = process.env.CLOUDFLARE_API_BASE_URL ?? "https://api.cloudflare.com/client/v4";
const BATCH = 100;
const LEASE_MS = 60_000;

type Pulled = { id: string; body: string; lease_id: string; attempts: number; metadata?: Record<string, string> };

const { values } = parseArgs({
  options: {
    "dry-run": { type: "boolean", default: false },
    max: { type: "string", default: "10000" },
    from: { type: "string", default: "plaudit-events-dlq" },
    to: { type: "string", default: "plaudit-events" },
  },
});

const account = process.env.CLOUDFLARE_ACCOUNT_ID;
const token = process.env.CLOUDFLARE_API_TOKEN;
if (!account || !token) {
  console.error("Set CLOUDFLARE_ACCOUNT_ID and CLOUDFLARE_API_TOKEN (a token with Queues Edit).");
  process.exit(1);
}

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${API}/accounts/${account}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await response.json()) as { success: boolean; result: T; errors?: unknown };
  if (!response.ok || !json.success) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json.errors)}`);
  return json.result;
}

async function queueId(name: string): Promise<string> {
  const queues = await api<{ queue_id: string; queue_name: string }[]>("GET", `/queues?name=${encodeURIComponent(name)}`);
  const queue = queues.find((q) => q.queue_name === name);
  if (!queue) throw new Error(`no queue named ${name}`);
  return queue.queue_id;
}

/** Message bodies come back as text; plaudit's are JSON (sent with contentType "json"). */
function decode(message: Pulled): { body: unknown; content_type: "json" | "text" } {
  if (message.metadata?.["CF-Content-Type"] === "text") return { body: message.body, content_type: "text" };
  return { body: JSON.parse(message.body), content_type: "json" };
}

const [from, to] = await Promise.all([queueId(values.from!), queueId(values.to!)]);
const max = Number(values.max);
let moved = 0;
while (moved < max) {
  const { messages = [] } = await api<{ messages?: Pulled[] }>("POST", `/queues/${from}/messages/pull`, {
    batch_size: Math.min(BATCH, max - moved),
    visibility_timeout_ms: LEASE_MS,
  });
  if (messages.length === 0) break;
  if (values["dry-run"]) {
    for (const message of messages) console.log(JSON.stringify({ id: message.id, attempts: message.attempts, body: message.body.slice(0, 200) }));
    // Let the leases lapse: a dry run leaves every message where it was.
    moved += messages.length;
    break;
  }
  await api("POST", `/queues/${to}/messages/batch`, { messages: messages.map(decode) });
  await api("POST", `/queues/${from}/messages/ack`, { acks: messages.map(({ lease_id }) => ({ lease_id })) });
  moved += messages.length;
}
console.log(`${values["dry-run"] ? "would move" : "moved"} ${moved} message(s) from ${values.from} to ${values.to}`);
