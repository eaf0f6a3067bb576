// The pseudonymized export (`npm run export`, docs/privacy.md "Exports"):
// every liked edge in a time range from the central store, each user id
// replaced by an HMAC under the salt of the current period, as NDJSON.
import { createHmac, randomBytes } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { Alternator } from "../../workers/stores/alternator";

/** A salt's period: one calendar month, UTC (`2026-12`). */
export function saltPeriod(now: number): string {
  return new Date(now).toISOString().slice(0, 7);
}

/**
 * The salt of the period `now` falls in, from the salts file: created on the
 * period's first export, and every other period's salt deleted from the file
 * (destroyed: the pseudonyms of an old export can no longer be recomputed, so
 * old and new exports cannot be joined on them). The file is the only copy;
 * keep it out of backups that outlive a period.
 */
export function currentSalt(path: string, now: number): { period: string; salt: string; destroyed: string[] } {
  const period = saltPeriod(now);
  const stored = existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as Record<string, string>) : {};
  const destroyed = Object.keys(stored).filter((p) => p !== period);
  const salt = stored[period] ?? randomBytes(32).toString("hex");
  if (destroyed.length > 0 || stored[period] === undefined) {
    const temporary = `${path}.tmp`;
    writeFileSync(temporary, JSON.stringify({ [period]: salt }, null, 2), { mode: 0o600 });
    renameSync(temporary, path);
  }
  return { period, salt, destroyed };
}

/** A user's pseudonym under a salt: stable within the salt's period, unrelated across periods. */
export function pseudonym(user: string, salt: string): string {
  return `u_${createHmac("sha256", Buffer.from(salt, "hex")).update(user).digest("hex").slice(0, 32)}`;
}

export type ExportedEdge = { kind: "edge"; user: string; item_type: string; item_id: string; counter: string; liked_at: string };

export type StoreAccess = { endpoint: string; prefix: string; region: string; accessKeyId: string; secretAccessKey: string };

/**
 * Pages through the user-to-items table's liked edges whose `liked_at` is in
 * [from, to), and hands each one, pseudonymized, to `write`. Resolves with
 * how many it wrote. One Scan page at a time, so memory stays flat.
 */
export async function exportEdges(store: StoreAccess, range: { from: number; to: number }, salt: string, write: (edge: ExportedEdge) => void): Promise<number> {
  const db = new Alternator({ endpoint: store.endpoint, region: store.region, accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey, timeoutMs: 30_000 });
  let after: Record<string, unknown> | undefined;
  let written = 0;
  do {
    const page = await db.call<{ Items?: Record<string, { S?: string; N?: string }>[]; LastEvaluatedKey?: Record<string, unknown> }>("Scan", {
      TableName: `${store.prefix}user_likes`,
      FilterExpression: "#state = :on AND #at >= :from AND #at < :to",
      ExpressionAttributeNames: { "#state": "state", "#at": "liked_at" },
      ExpressionAttributeValues: { ":on": { N: "1" }, ":from": { N: String(range.from) }, ":to": { N: String(range.to) } },
      Limit: 500,
      ...(after ? { ExclusiveStartKey: after } : {}),
    });
    for (const row of page.Items ?? []) {
      const user = row.user?.S;
      const key = row.item?.S;
      const at = Number(row.liked_at?.N);
      if (!user || !key || !Number.isFinite(at)) continue;
      // The key is `<item_type>:<item_id>:<counter>`.
      const [itemType, itemId, counter] = key.split(":");
      if (!itemType || !itemId || !counter) continue;
      write({ kind: "edge", user: pseudonym(user, salt), item_type: itemType, item_id: itemId, counter, liked_at: new Date(at).toISOString() });
      written++;
    }
    after = page.LastEvaluatedKey;
  } while (after);
  return written;
}
